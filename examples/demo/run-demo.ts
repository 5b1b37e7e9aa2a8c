/**
 * `npm run demo`: cadre end to end with no API key and no network. A scripted OpenAI-compatible
 * server (src/testing) stands in for the LLM, and the real `cadre run` drives it through the
 * `openai-compatible:` provider, so the runtime, the subagents and their tools all work for real.
 *
 * npm run demo -- [--json] [--db PATH] [PROMPT]
 */
import { copyFile, mkdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { answerApproval } from '../../src/approvals/answer-approval.ts';
import { main } from '../../src/cli/main.ts';
import { openStore } from '../../src/store/open-store.ts';
import { loadScript, startScriptedServer } from '../../src/testing/index.ts';
import { systemNow } from '../../src/util/clock.ts';

const usage = 'Usage: npm run demo -- [--json] [--db PATH] [PROMPT]';
const demo = dirname(fileURLToPath(import.meta.url));
const root = join(demo, '..', '..');

let parsed;
try {
  parsed = parseArgs({
    allowPositionals: true,
    options: { json: { type: 'boolean', default: false }, db: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
} catch (error) {
  process.stderr.write(`demo: ${(error as Error).message}\n${usage}\n`);
  process.exit(2);
}
const { values, positionals } = parsed;
if (values.help) {
  console.log(`${usage}\n  --json     JSON Lines on stdout, as cadre run --json\n  --db PATH  the database (default .cadre/demo.db)`);
  process.exit(0);
}

const database = resolve(values.db ?? join(root, '.cadre', 'demo.db'));
const exportPath = join(dirname(database), 'demo-export.md');
const prompt = positionals.join(' ').trim() || 'Survey the two modules of this project and summarize them.';
// With --json, stdout carries JSON Lines only: everything meant for a person goes to stderr.
const say = (text: string) => (values.json ? process.stderr : process.stdout).write(`${text}\n`);
function shown(path: string): string {
  const nearby = relative(process.cwd(), path);
  return nearby === '' || nearby.startsWith('..') ? path : nearby;
}

say(`cadre demo: the model is SCRIPTED (examples/demo/script.yaml), so no API key and no network are needed.
Its answers are canned, but everything else is real: the CLI, the runtime, the subagents' runs and
their tools, which read this repository's files. One subagent edits a file: a scratch copy in
.cadre/demo-scratch/, and only after its ask for approval is answered.

To use a real model instead:
  ANTHROPIC_API_KEY=... npx cadre run --model anthropic:claude-sonnet-4-5 "Survey this project."
  OPENAI_API_KEY=...    npx cadre run --model openai:gpt-5-mini "Survey this project."
  npx cadre run --model ollama:llama3.1:8b "Survey this project."   (a local Ollama)
`);

/** The newest primary session of the database, to tell the one this demo starts from older ones. */
async function newestSessionId(): Promise<string | undefined> {
  const store = await openStore(database);
  try {
    return (await store.listSessions({ primaryOnly: true, limit: 1 }))[0]?.id;
  } finally {
    await store.close();
  }
}

/** The file the editor subagent changes: a fresh copy each time, so the repository is never touched. */
const scratch = join(root, '.cadre', 'demo-scratch');
const scratchFile = join(scratch, 'retry-policy.ts');
const scratchPath = relative(root, scratchFile);

/**
 * The demo answers asks for approval itself, from outside the run, as a person would with
 * `cadre approve`: it approves the editor's edit of the scratch copy and denies anything else.
 */
function answerAsks(): () => Promise<void> {
  let stopped = false;
  const done = (async () => {
    const store = await openStore(database);
    try {
      while (!stopped) {
        for (const approval of await store.listApprovals({ statuses: ['pending'] })) {
          const scratchEdit = approval.tool === 'edit_file' && approval.argument === scratchPath;
          const { changed } = await answerApproval(store, approval.id, { decision: scratchEdit ? 'approve' : 'deny' }, systemNow);
          await store.flush();
          if (changed) {
            say(
              `demo: ${scratchEdit ? 'approved' : 'denied'} ${approval.id} (${approval.summary}) automatically, as you would with: cadre approve ${approval.id}${scratchEdit ? '' : ' --deny'}`,
            );
          }
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      await store.close();
    }
  })();
  return async () => {
    stopped = true;
    await done;
  };
}

const server = await startScriptedServer({ script: await loadScript(join(demo, 'script.yaml')) });
let code = 1;
try {
  await mkdir(dirname(database), { recursive: true });
  await mkdir(scratch, { recursive: true });
  await copyFile(join(demo, 'files', 'retry-policy.ts'), scratchFile);
  const before = await newestSessionId();
  const common = ['--config', join(demo, 'cadre.config.json'), '--db', database];
  const json = values.json ? ['--json'] : [];
  say(`Asks for approval are answered by this demo script (in real use: the prompt, cadre approve, or the dashboard).\n`);
  const stopAnswering = answerAsks();
  try {
    // `--approvals wait`: asks wait for an answer from another process, here the demo's own.
    code = await main(['run', ...common, ...json, '--approvals', 'wait', '--model', 'openai-compatible:scripted', '--base-url', server.baseURL, prompt], {
      cwd: root,
      env: process.env,
      stdin: process.stdin,
      stdout: process.stdout,
      stderr: process.stderr,
    });
  } finally {
    await stopAnswering();
  }
  const edited = (await readFile(scratchFile, 'utf8')).match(/^export const maxAttempts = \d+;$/m)?.[0];
  if (edited) say(`\nThe scratch copy ${scratchPath} now reads: ${edited}`);
  const sessionId = await newestSessionId();
  if (sessionId !== undefined && sessionId !== before) {
    // `cadre export -o` reports the file it wrote; the demo says it in its own words below.
    const stderr = { write: (text: string) => text.startsWith('Wrote ') || process.stderr.write(text) };
    const context = { cwd: root, env: process.env, stdin: process.stdin, stdout: process.stdout, stderr };
    const exported = await main(['export', sessionId, '--format', 'markdown', '-o', exportPath, ...common], context);
    if (exported === 0) {
      say(`\nThe whole session, with every run and its events, is in ${shown(exportPath)}`);
      say(`Look around: npx cadre runs ${sessionId} --db ${shown(database)}`);
      say(`             npx cadre serve --db ${shown(database)}   (the dashboard)`);
    }
  }
} finally {
  await server.close();
}
process.exit(code);
