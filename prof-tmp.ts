import { createBenchModel } from './bench/bench-model.ts';
import { createCadreFanOut } from './bench/fanout-cadre.ts';
const scenario = { fanOut: 20, background: false, toolCalls: 5, answerChars: 2000 };
const b = createCadreFanOut({ model: createBenchModel(scenario), folder: '', fanOut: 20, storage: 'memory' });
for (let i = 0; i < 150; i++) await b.round();
await b.close();
