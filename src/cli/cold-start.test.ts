import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// A command must load only what it uses: `cadre --version` and `cadre runs` start in a fraction of
// the time when the AI SDK, hono, log-update and zod stay unloaded. This runs the CLI in a child
// process whose module resolve hook writes down every module it loaded.
const mainModule = fileURLToPath(new URL('./main.ts', import.meta.url));
const heavy = /\/node_modules\/(ai|@ai-sdk\/[^/]+|hono|@hono\/[^/]+|log-update|zod|yaml|pino|@opentelemetry\/[^/]+|quickjs-emscripten-core|@jitl\/[^/]+)\//;
let folder: string;

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'cadre-cold-start-'));
  await writeFile(
    join(folder, 'record-modules.mjs'),
    `import { registerHooks } from 'node:module';
import { writeFileSync } from 'node:fs';
const loaded = new Set();
registerHooks({ resolve(specifier, context, next) { const result = next(specifier, context); loaded.add(result.url); return result; } });
process.on('exit', () => writeFileSync(process.env.CADRE_TEST_MODULES, [...loaded].join('\\n')));
`,
  );
});

afterAll(() => rm(folder, { recursive: true, force: true }));

/** Runs `cadre ...args` in a fresh process in an empty directory; returns stdout and the modules it loaded. */
async function modulesOf(args: string[]): Promise<{ stdout: string; modules: string[] }> {
  const record = join(folder, `modules-${args.join('-')}.txt`);
  const script = `const { main } = await import(${JSON.stringify(mainModule)}); process.exitCode = await main(${JSON.stringify(args)});`;
  const stdout = execFileSync(process.execPath, ['--import', join(folder, 'record-modules.mjs'), '--input-type=module', '-e', script], {
    cwd: folder,
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: folder, CADRE_TEST_MODULES: record, CADRE_DB: join(folder, 'cadre.db') },
  });
  return { stdout, modules: (await readFile(record, 'utf8')).split('\n') };
}

/** The packages under node_modules that these modules belong to. */
function packagesOf(modules: string[]): string[] {
  const names = modules.map((url) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1]).filter((name): name is string => name !== undefined);
  return [...new Set(names)].sort();
}

describe('cold start', () => {
  it('loads no package at all for cadre --version, not even the command line parser', async () => {
    const { stdout, modules } = await modulesOf(['--version']);
    expect(stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
    expect(packagesOf(modules)).toEqual([]);
    expect(modules.filter((url) => /\/src\/(runtime|sessions|delegation|executors|server|store)\//.test(url))).toEqual([]);
  });

  it('loads no AI SDK, hono, log-update, yaml or zod for cadre runs without a config file', async () => {
    const { stdout, modules } = await modulesOf(['runs']);
    expect(stdout).toBe('(no runs)\n');
    expect(modules.some((url) => url.endsWith('/src/store/sqlite/sqlite-store.ts'))).toBe(true);
    expect(modules.filter((url) => heavy.test(url))).toEqual([]);
    // The command line parser is the only package it needs.
    expect(packagesOf(modules)).toEqual(['commander']);
  });

  it('still sees the heavy modules when a command needs them (so the checks above can fail)', async () => {
    const { modules } = await modulesOf(['agents', '--json']);
    expect(modules.some((url) => heavy.test(url))).toBe(true);
    expect(packagesOf(modules)).toEqual(expect.arrayContaining(['commander', 'yaml', 'zod']));
  });
});
