/**
 * The package as a user gets it: packed with `npm pack` (which builds `dist/` on `prepack`),
 * installed from the tarball into a fresh project, then used from JavaScript, from TypeScript
 * (the settings of `tsc --init`), through the README's install example and through the
 * installed `cadre` command.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseScript, startScriptedServer, type ScriptedServer } from '../src/testing/index.ts';
import { unsupportedNodeMessage } from '../src/util/node-support.ts';
import { installPacked, repository } from './helpers/install-packed.ts';

const packageJson = JSON.parse(await readFile(join(repository, 'package.json'), 'utf8')) as { version: string; engines: { node: string } };
const run = promisify(execFile);

/** What the scripted model answers, for the README example, the TypeScript user and `cadre run`. */
const script = parseScript([
  {
    when: { system_includes: 'You are the scout' },
    turns: [{ tool_calls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }] }, { text: 'notes.txt says: remember the milk.' }],
  },
  {
    when: { user_includes: 'read notes.txt' },
    turns: [
      { tool_calls: [{ name: 'agent', arguments: { agent: 'scout', task: 'Read notes.txt and say what it says.', description: 'read the notes' } }] },
      { text: 'The scout read notes.txt: it says to remember the milk.' },
    ],
  },
  { turns: [{ text: 'Echo: {{task}}' }] },
]);

const typescriptUser = `import { createCadre, createSqliteStore, createWorkspaceTools, defineAgent, type RunRecord } from 'cadre';
import { scriptedLanguageModel, type ScriptedRequest, type ScriptedTurn } from 'cadre/testing';

// The scout lists the files, then answers with what list_files returned; the primary delegates.
function respond(request: ScriptedRequest): ScriptedTurn {
  const last = request.messages[request.messages.length - 1];
  if (request.system.includes('You are the scout')) {
    return last?.role === 'tool' ? { text: \`Listed: \${last.content}\` } : { tool_calls: [{ name: 'list_files', arguments: {} }] };
  }
  return last?.role === 'tool' ? { text: 'Done.' } : { tool_calls: [{ name: 'agent', arguments: { agent: 'scout', task: 'List the files.', description: 'list' } }] };
}

const cadre = createCadre({
  store: createSqliteStore({ path: ':memory:' }),
  model: scriptedLanguageModel(respond),
  tools: createWorkspaceTools({ root: '.' }),
  agents: [defineAgent({ name: 'scout', description: 'Lists files.', system: 'You are the scout.', tools: ['list_files'], mode: 'subagent' })],
});
const session = await cadre.createSession();
const turn = await cadre.send(session.id, 'Survey the project');
await cadre.waitForIdle(session.id);
const runs: RunRecord[] = await cadre.store.listRuns({ parent_session_id: session.id });
console.log(JSON.stringify({ text: turn.text, runs: runs.map((record) => [record.agent, record.status, record.result?.text ?? null]) }));
await cadre.close();
`;

let directory: string;
let project: string;
let tarball: string;
let server: ScriptedServer;
/** The test's own Node first on PATH, so that `npx` and the bin's shebang use it. */
let env: Record<string, string>;

function spawnIn(cwd: string, command: string, args: readonly string[], extraEnv: Record<string, string> = {}) {
  const child = spawn(command, args, { cwd, env: { ...env, ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => child.on('close', (code) => done({ code, stdout, stderr })));
}
const node = (args: readonly string[], extraEnv?: Record<string, string>) => spawnIn(project, process.execPath, args, extraEnv);
const installedCadre = () => join(project, 'node_modules', '.bin', 'cadre');
/** npm may warn about the machine's own configuration; everything else on stderr is cadre's. */
const withoutNpmNoise = (text: string) =>
  text
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('npm warn'))
    .join('\n');

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'cadre-package-'));
  const installed = await installPacked(directory);
  ({ project, tarball } = installed);
  env = { PATH: installed.path, HOME: process.env.HOME ?? directory, NO_COLOR: '1', LANG: 'C.UTF-8' };
  await writeFile(join(project, 'notes.txt'), 'Remember the milk.\n');
  server = await startScriptedServer({ script });
}, 120_000);

afterAll(async () => {
  await server?.close();
  if (directory) await rm(directory, { recursive: true, force: true });
});

describe('the packed package', () => {
  it('holds compiled JavaScript, declarations, run-time assets, the bin and the docs, and no sources, tests or benchmarks', async () => {
    const { stdout } = await run('tar', ['tzf', tarball]);
    const files = stdout
      .trim()
      .split('\n')
      .map((line) => line.replace(/^package\//, ''));
    expect(files).toEqual(expect.arrayContaining(['package.json', 'README.md', 'LICENSE', 'bin/cadre.js', 'dist/index.js', 'dist/index.d.ts']));
    expect(files).toEqual(
      expect.arrayContaining(['dist/testing/index.js', 'dist/server/index.d.ts', 'dist/server/assets/index.html', 'dist/delegation/tools/agent.txt']),
    );
    // What cadre's messages point to (`cadre run` without a model: docs/testing.md) and the README's pictures.
    expect(files).toEqual(expect.arrayContaining(['docs/testing.md', 'docs/configuration.md', 'docs/images/dashboard.png']));
    const unexpected = files.filter(
      (file) =>
        !/^(package\.json|README\.md|LICENSE|bin\/cadre(-scripted-server)?\.js|docs\/[\w/-]+\.(md|png))$/.test(file) &&
        !(file.startsWith('dist/') && !/\.test\.|\.case\.|fixtures/.test(file) && !/(?<!\.d)\.ts$/.test(file)),
    );
    expect(unexpected).toEqual([]);
  });

  it('imports every entry point from JavaScript, quietly, and nothing beyond them', async () => {
    const code = `
      const cadre = await import('cadre');
      const testing = await import('cadre/testing');
      const server = await import('cadre/server');
      const { default: manifest } = await import('cadre/package.json', { with: { type: 'json' } });
      const store = cadre.createSqliteStore({ path: ':memory:' });
      await store.close();
      let deep = 'reachable';
      try { await import('cadre/dist/index.js'); } catch (error) { deep = error.code; }
      console.log(JSON.stringify([typeof cadre.createCadre, typeof cadre.createWorkspaceTools, typeof testing.scriptedLanguageModel, typeof server.startDashboard, manifest.version, deep]));
    `;
    const result = await node(['--input-type=module', '-e', code]);
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout)).toEqual(['function', 'function', 'function', 'function', packageJson.version, 'ERR_PACKAGE_PATH_NOT_EXPORTED']);
  });

  it('typechecks a TypeScript user with the settings of tsc --init, then runs it against the scripted model', async () => {
    const tsc = join(repository, 'node_modules', 'typescript', 'bin', 'tsc');
    await run(process.execPath, [tsc, '--init'], { cwd: project });
    expect(await readFile(join(project, 'tsconfig.json'), 'utf8')).toMatch(/"module": "nodenext"/);
    await writeFile(join(project, 'user.ts'), typescriptUser);
    const compiled = await spawnIn(project, process.execPath, [tsc, '-p', '.']);
    expect(compiled.stdout + compiled.stderr).toBe('');
    const result = await node(['user.js']);
    expect(result.stderr).toBe('');
    const { text, runs } = JSON.parse(result.stdout) as { text: string; runs: [string, string, string][] };
    expect(text).toBe('Done.');
    expect(runs.map(([agent, status]) => [agent, status])).toEqual([['scout', 'completed']]);
    // list_files ran in the package's search worker (dist/tools/search-worker.js) and saw the project.
    expect(runs[0][2]).toMatch(/^Listed: [\s\S]*notes\.txt/);
  });

  it("runs the README's install example, whose workspace tools read the working directory", async () => {
    const readme = await readFile(join(repository, 'README.md'), 'utf8');
    const example = /<!-- install-example[^>]*-->\n```js\n([\s\S]*?)\n```/.exec(readme)?.[1];
    expect(example).toContain("from 'cadre'");
    await writeFile(join(project, 'agents.mjs'), example!);
    const result = await node(['agents.mjs'], { CADRE_MODEL: 'openai-compatible:scripted', CADRE_BASE_URL: server.baseURL });
    expect(result.stderr).toBe('');
    expect(result.stdout.trim()).toBe('The scout read notes.txt: it says to remember the milk.');

    // The scout really read the file: the model saw its content come back from read_file.
    const scoutRequests = server.requests.filter((request) => request.system.includes('You are the scout'));
    expect(JSON.stringify(scoutRequests.at(-1)?.messages)).toContain('Remember the milk.');
    // And the command line sees the same database.
    const runs = await spawnIn(project, installedCadre(), ['runs', '--json']);
    expect((JSON.parse(runs.stdout) as { agent: string; status: string }[]).map((record) => [record.agent, record.status])).toEqual([['scout', 'completed']]);
  });

  it("makes a failing turn of the README's install example impossible to miss: its reason on stderr, exit code 1", async () => {
    const readme = await readFile(join(repository, 'README.md'), 'utf8');
    await writeFile(join(project, 'agents-without-key.mjs'), /<!-- install-example[^>]*-->\n```js\n([\s\S]*?)\n```/.exec(readme)![1]);
    // As copied, with no key in the environment: the default anthropic: model cannot answer.
    const result = await node(['agents-without-key.mjs']);
    expect([result.code, result.stdout]).toEqual([1, '']);
    expect(result.stderr).toMatch(/^The turn failed: .*ANTHROPIC_API_KEY/);
  });

  it('runs the installed cadre command: --version, agents, and a run against the scripted model server', async () => {
    const version = await spawnIn(project, 'npx', ['--no-install', 'cadre', '--version']);
    expect([version.code, version.stdout.trim(), withoutNpmNoise(version.stderr)]).toEqual([0, packageJson.version, '']);

    const agents = await spawnIn(project, 'npx', ['--no-install', 'cadre', 'agents']);
    expect(agents.code).toBe(0);
    expect(agents.stdout).toMatch(/\bmain\b/);
    expect(agents.stdout).toMatch(/\bgeneral\b/);

    const answered = await spawnIn(project, 'npx', [
      '--no-install',
      'cadre',
      'run',
      '--model',
      'openai-compatible:scripted',
      '--base-url',
      server.baseURL,
      '--db',
      join(directory, 'cli.db'),
      'echo this',
    ]);
    expect(withoutNpmNoise(answered.stderr)).not.toMatch(/Warning|Error/);
    expect([answered.code, answered.stdout.trim()]).toEqual([0, 'Echo: echo this']);
  });

  it('runs the installed cadre-scripted-server, which the installed cadre can use as its model', async () => {
    await writeFile(join(project, 'script.yaml'), 'rules:\n  - turns:\n      - text: "Scripted hello."\n');
    const server = spawn(join(project, 'node_modules', '.bin', 'cadre-scripted-server'), ['--script', 'script.yaml', '--port', '0'], {
      cwd: project,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const baseURL = await new Promise<string>((resolve, reject) => {
        let printed = '';
        server.stdout.setEncoding('utf8').on('data', (chunk: string) => {
          printed += chunk;
          if (printed.includes('\n')) resolve(printed.trim());
        });
        server.on('exit', (code) => reject(new Error(`cadre-scripted-server exited ${code}`)));
      });
      expect(baseURL).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
      const answered = await spawnIn(project, installedCadre(), [
        'run',
        '--model',
        'openai-compatible:scripted',
        '--base-url',
        baseURL,
        '--db',
        join(directory, 'scripted.db'),
        'hello',
      ]);
      expect([answered.code, answered.stdout.trim()]).toEqual([0, 'Scripted hello.']);
    } finally {
      server.kill('SIGTERM');
    }
  });

  it('stops on an unsupported Node with one line: exit code 2 from the command, an error from the library', async () => {
    const pretend = ['--import', 'data:text/javascript,Object.defineProperty(process.versions,"node",{value:"23.11.0"})'];
    const expected = unsupportedNodeMessage('23.11.0');
    expect(expected).toBe(
      'cadre needs Node.js 22.16+ or 24+; this is Node 23.11.0 (get Node 24 with `nvm install 24` or from nodejs.org, or run one command on it with `npx -y node@24 <path to cadre> ...`)',
    );

    const cli = await node([...pretend, installedCadre(), '--version']);
    expect([cli.code, cli.stdout, cli.stderr]).toEqual([2, '', `${expected}\n`]);

    const library = await node([
      ...pretend,
      '--input-type=module',
      '-e',
      "try { await import('cadre') } catch (error) { console.log(error.name + ': ' + error.message) }",
    ]);
    expect(library.stdout.trim()).toBe(`UnsupportedNodeError: ${expected}`);
  });
});

describe('engines', () => {
  it('names the versions the version check lets through', async () => {
    const { nodeSupport } = await import('../src/util/node-support.ts');
    expect(packageJson.engines.node).toBe(nodeSupport.range);
    const bin = await readFile(join(repository, 'bin', 'cadre.js'), 'utf8');
    // Compared without layout: the formatter lays the array out as it likes.
    expect(bin.replace(/\s+/g, '').replaceAll(',]', ']')).toContain(`constminimums=${JSON.stringify(nodeSupport.minimums)};`);
  });
});
