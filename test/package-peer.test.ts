/**
 * One copy of the AI SDK: the packed package (`npm pack`) installed into an app that has its own
 * `ai` and `zod` uses them (peer dependencies, no second copy under cadre), and cadre's tools,
 * parts and notifications work with the app's `generateText`, `streamText` and UI streams. In an
 * app without them, npm installs them with cadre (npm 7+ installs peer dependencies).
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repository } from './helpers/install-packed.ts';

const run = promisify(execFile);
const path = `${dirname(process.execPath)}:${process.env.PATH ?? ''}`;
const env = { ...process.env, PATH: path };
const devDependencies = (JSON.parse(await readFile(join(repository, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version: string }> })
  .packages;
const aiVersion = devDependencies['node_modules/ai']!.version;
const zodVersion = devDependencies['node_modules/zod']!.version;

/** The app's own code: its loop, its UI stream, cadre's pieces inside. */
const appCode = `
import { createUIMessageStream, generateText, isStepCount, readUIMessageStream, streamText, tool } from 'ai';
import { z } from 'zod';
import { createCadre, createSqliteStore } from 'cadre';
import { scriptedLanguageModel } from 'cadre/testing';

const model = scriptedLanguageModel((request) => {
  if (request.system.includes('general-purpose')) return { text: 'sub: ' + request.messages[0].content, delay_ms: 30 };
  const last = request.messages.at(-1);
  if (last.role === 'tool') return { text: 'app saw: ' + last.content.split('\\n').at(-1) };
  if (last.content.startsWith('<subagent-notification>')) return { text: 'notified' };
  return { tool_calls: [{ name: 'agent', arguments: { agent: 'general', task: request.messages[0].content } }, { name: 'weather', arguments: { city: 'Oslo' } }] };
});
const cadre = createCadre({ store: createSqliteStore({ path: ':memory:' }), model });
const weather = tool({ description: 'Weather', inputSchema: z.object({ city: z.string() }), execute: ({ city }) => 'sunny in ' + city });

const generated = await generateText({ model, instructions: 'app', prompt: 'count files', tools: { weather, ...cadre.tools({ sessionId: 'a' }) }, stopWhen: isStepCount(3) });
const streamed = streamText({ model, instructions: 'app', prompt: 'list files', tools: { weather, ...cadre.tools({ sessionId: 'b' }) }, stopWhen: isStepCount(3) });
let preliminary = 0;
for await (const part of streamed.stream) if (part.type === 'tool-result' && part.preliminary) preliminary++;
const stream = createUIMessageStream({ execute: ({ writer }) => cadre.writeRunParts(writer, { sessionId: 'b' }) });
let cards = [];
for await (const message of readUIMessageStream({ stream })) cards = message.parts.filter((part) => part.type === 'data-cadre-run').map((part) => part.data.status);
console.log(JSON.stringify({ generated: generated.text, streamed: await streamed.text, preliminary, cards }));
await cadre.close();
`;

let directory: string;
let tarball: string;

/** Every installed copy of a package under a project, as `path@version`. */
async function copiesOf(project: string, name: string): Promise<string[]> {
  const found: string[] = [];
  async function visit(folder: string): Promise<void> {
    let entries;
    try {
      entries = await readdir(folder, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (!entry.isDirectory()) continue;
      const child = join(folder, entry.name);
      if (entry.name === name) {
        const manifest = JSON.parse(await readFile(join(child, 'package.json'), 'utf8')) as { version: string };
        found.push(`${child.slice(project.length + 1)}@${manifest.version}`);
      }
      if (entry.name.startsWith('@')) await visit(child);
      else await visit(join(child, 'node_modules'));
    }
  }
  await visit(join(project, 'node_modules'));
  return found;
}

async function project(name: string, dependencies: Record<string, string>, flags: string[] = []): Promise<string> {
  const folder = join(directory, name);
  await mkdir(folder, { recursive: true });
  await writeFile(join(folder, 'package.json'), JSON.stringify({ name, private: true, type: 'module', dependencies }));
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', ...flags], { cwd: folder, env });
  return folder;
}

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'cadre-peer-'));
  const packed = await run('npm', ['pack', '--json', '--pack-destination', directory], { cwd: repository, env });
  const [{ filename }] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as [{ filename: string }];
  tarball = join(directory, filename);
}, 120_000);

afterAll(async () => {
  if (directory) await rm(directory, { recursive: true, force: true });
});

// Each case installs the packed package with npm into an app of its own: minutes on a busy machine.
describe('the packed package and the app’s own AI SDK', { timeout: 180_000 }, () => {
  it('declares ai and zod as peer dependencies, not as its own', async () => {
    const { stdout } = await run('tar', ['xzOf', tarball, 'package/package.json']);
    const manifest = JSON.parse(stdout) as { dependencies: Record<string, string>; peerDependencies: Record<string, string> };
    expect(manifest.peerDependencies).toEqual({ ai: expect.stringMatching(/^\^7\./), zod: expect.stringMatching(/^\^4\./) });
    expect(manifest.dependencies).not.toHaveProperty('ai');
    expect(manifest.dependencies).not.toHaveProperty('zod');
    // The example app's page (React, Vite, @ai-sdk/react) is built in this repository only.
    for (const name of ['react', 'react-dom', 'vite', '@ai-sdk/react']) expect(manifest.dependencies).not.toHaveProperty(name);
  });

  it('uses the app’s own ai and zod (one copy each) in the app’s generateText, streamText and UI stream', async () => {
    const app = await project('app', { ai: aiVersion, zod: zodVersion, cadre: `file:${tarball}` });
    expect(await copiesOf(app, 'ai')).toEqual([`node_modules/ai@${aiVersion}`]);
    expect(await copiesOf(app, 'zod')).toEqual([`node_modules/zod@${zodVersion}`]);
    await writeFile(join(app, 'app.mjs'), appCode);
    const { stdout, stderr } = await run(process.execPath, ['app.mjs'], { cwd: app, env });
    expect(stderr).toBe('');
    const result = JSON.parse(stdout) as { generated: string; streamed: string; preliminary: number; cards: string[] };
    expect(result.generated).toBe('app saw: sunny in Oslo');
    expect(result.streamed).toBe('app saw: sunny in Oslo');
    expect(result.preliminary).toBeGreaterThan(0);
    expect(result.cards).toEqual(['completed']);
  });

  it('brings ai and zod along into an app that has neither (npm installs peers), for the library and npx cadre', async () => {
    const app = await project('bare', { cadre: `file:${tarball}` });
    expect(await copiesOf(app, 'ai')).toEqual([expect.stringMatching(/^node_modules\/ai@7\./)]);
    expect(await copiesOf(app, 'zod')).toEqual([expect.stringMatching(/^node_modules\/zod@4\./)]);
    const { stdout } = await run(join(app, 'node_modules', '.bin', 'cadre'), ['agents', '--json'], { cwd: app, env });
    expect(stdout).toContain('"general"');
  });

  it('refuses an app on AI SDK 6 at install (peer conflict), and, forced past that, says at createCadre that it needs 7', async () => {
    const dependencies = { ai: '^6.0.0', zod: zodVersion, cadre: `file:${tarball}` };
    const refused = await project('six', dependencies).then(
      () => null,
      (error: { stderr: string }) => error.stderr,
    );
    expect(refused).toMatch(/ERESOLVE[\s\S]*peer ai@"\^7\.[^"]*" from cadre/);
    const app = await project('six', dependencies, ['--legacy-peer-deps']);
    const code =
      "import('cadre').then(({ createCadre, createSqliteStore }) => createCadre({ store: createSqliteStore({ path: ':memory:' }), model: 'openai:gpt-4o' })).catch((error) => console.log(error.name + ': ' + error.message))";
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', code], { cwd: app, env });
    expect(stdout.trim()).toMatch(
      /^CadreConfigError: cadre needs AI SDK 7 \(the 'ai' package 7\.x\); this app has 'ai' 6\.\d+\.\d+\. Upgrade with: npm install ai@\^7$/,
    );
  });
});
