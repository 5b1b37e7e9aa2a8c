/**
 * `npm run demo`: cadre end to end with no API key and no network. A scripted OpenAI-compatible
 * server (src/testing) stands in for the LLM, and the real `cadre run` drives it through the
 * `openai-compatible:` provider, so the runtime, the subagents and their tools all work for real.
 */
import { mkdir } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { main } from '../../src/cli/main.ts';
import { openStore } from '../../src/store/open-store.ts';
import { loadScript, startScriptedServer } from '../../src/testing/index.ts';

const demo = dirname(fileURLToPath(import.meta.url));
const root = join(demo, '..', '..');
const database = join(root, '.cadre', 'demo.db');
const exportPath = join(root, '.cadre', 'demo-export.md');
const prompt = process.argv[2] ?? 'Survey the two modules of this project and summarize them.';

console.log(`cadre demo: the model is SCRIPTED (examples/demo/script.yaml), so no API key and no network are needed.
Its answers are canned, but everything else is real: the CLI, the runtime, the subagents' runs and
their tools, which read this repository's files.

To use a real model instead:
  ANTHROPIC_API_KEY=... npx cadre run --model anthropic:claude-sonnet-4-5 "Survey this project."
  OPENAI_API_KEY=...    npx cadre run --model openai:gpt-5-mini "Survey this project."
  npx cadre run --model ollama:llama3.1:8b "Survey this project."   (a local Ollama)
`);

const server = await startScriptedServer({ script: await loadScript(join(demo, 'script.yaml')) });
let code = 1;
try {
  await mkdir(dirname(database), { recursive: true });
  const common = ['--config', join(demo, 'cadre.config.json'), '--db', database];
  code = await main(['run', ...common, '--model', 'openai-compatible:scripted', '--base-url', server.baseURL, prompt], {
    cwd: root,
    env: process.env,
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
  });
  const store = await openStore(database);
  const [session] = await store.listSessions({ primaryOnly: true, limit: 1 });
  await store.close();
  if (session) {
    const exported = await main(['export', session.id, '--format', 'markdown', '-o', exportPath, ...common]);
    if (exported === 0) {
      console.log(`\nThe whole session, with every run and its events, is in ${relative(process.cwd(), exportPath) || exportPath}`);
      console.log(`Look around: npx cadre runs ${session.id} --db ${relative(process.cwd(), database)}`);
    }
  }
} finally {
  await server.close();
}
process.exit(code);
