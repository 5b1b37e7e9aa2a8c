import { createBenchModel } from './bench/bench-model.ts';
import { createCadreFanOut as fanProvider } from './bench/fanout-cadre.ts';
import { createCadreFanOut as fanMain } from '/work/main/bench/fanout-cadre.ts';
const scenario = { fanOut: 20, background: false, toolCalls: 5, answerChars: 2000 };
const calls = 1 + 20 * 6 + 1;
const a = fanMain({ model: createBenchModel(scenario), folder: '', fanOut: 20, storage: 'memory' });
const b = fanProvider({ model: createBenchModel(scenario), folder: '', fanOut: 20, storage: 'memory' });
const res: Record<string, number[]> = { main: [], provider: [] };
for (let i = 0; i < 5; i++) { await a.round(); await b.round(); }
for (let i = 0; i < 60; i++) {
  for (const [name, fan] of (i % 2 ? [['main', a], ['provider', b]] : [['provider', b], ['main', a]]) as const) {
    const c = process.cpuUsage(); await fan.round(); const d = process.cpuUsage(c);
    res[name].push((d.user + d.system) / calls);
  }
}
const med = (x: number[]) => { const s = [...x].sort((p, q) => p - q); return s[Math.floor(s.length / 2)]; };
const p10 = (x: number[]) => { const s = [...x].sort((p, q) => p - q); return s[Math.floor(s.length / 10)]; };
for (const k of Object.keys(res)) console.log(`${k}: CPU µs/call median ${med(res[k]).toFixed(1)} p10 ${p10(res[k]).toFixed(1)}`);
await a.close(); await b.close();
