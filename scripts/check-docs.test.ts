import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadAgents } from '../src/agents/load-agents.ts';
import { loadConfig } from '../src/config/load-config.ts';
import { anchorsOf, cadreInvocations, checkDocs, documentationFiles, repository, splitMarkdown } from './check-docs.ts';

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'cadre-docs-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** A repository of one README.md (and what `files` adds), for the checker to fail on. */
async function fakeRepository(readme: string, files: Record<string, string> = {}): Promise<string> {
  const root = await mkdtemp(join(scratch, 'repo-'));
  await writeFile(join(root, 'README.md'), readme);
  for (const [path, text] of Object.entries(files)) {
    await mkdir(join(root, path, '..'), { recursive: true });
    await writeFile(join(root, path), text);
  }
  return root;
}

describe('the documentation', () => {
  it('has relative links that resolve and cadre command lines that name real commands and options', async () => {
    const files = documentationFiles();
    expect(files).toEqual(expect.arrayContaining(['README.md', 'docs/testing.md', 'docs/dashboard.md', 'bench/README.md', 'examples/own-loop/README.md']));
    expect(await checkDocs()).toEqual([]);
  });

  it('keeps the README short and its lines readable', async () => {
    const readme = await readFile(join(repository, 'README.md'), 'utf8');
    expect(readme.split('\n').length).toBeLessThanOrEqual(250);
    expect(readme.split('\n').filter((line) => line.length > 160)).toEqual([]);
  });

  it("names every room of src/ in the README's architecture picture, and no room that is gone", async () => {
    const readme = await readFile(join(repository, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## How it fits together'));
    const picture = splitMarkdown(section)
      .blocks[0].lines.map((line) => line.text)
      .join('\n');
    const rooms = (await readdir(join(repository, 'src'), { withFileTypes: true })).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
    expect(rooms.filter((room) => !new RegExp(`(^|\\s)${room}/`, 'm').test(picture))).toEqual([]);
    const named = [...picture.matchAll(/(?:^|\s)([a-z]+)\/(?=\s)/g)].map((match) => match[1]);
    expect(named.filter((room) => !rooms.includes(room))).toEqual([]);
  });

  it('has a configuration example that loads in an empty project without a warning', async () => {
    const page = await readFile(join(repository, 'docs', 'configuration.md'), 'utf8');
    const example = /<!-- config-example[^>]*-->\n```json\n([\s\S]*?)\n```/.exec(page)?.[1];
    expect(example).toBeDefined();
    const project = await mkdtemp(join(scratch, 'project-'));
    const home = await mkdtemp(join(scratch, 'home-'));
    await writeFile(join(project, 'cadre.config.json'), example!);
    const config = await loadConfig({ cwd: project, home, env: {} });
    const agents = await loadAgents({ cwd: project, home, env: {}, dirs: config.agentsDirs });
    expect(agents.errors).toEqual([]);
  });
});

describe('checkDocs', () => {
  it('finds cadre after npx, after a pipe and after --, and not as a name', () => {
    expect(cadreInvocations('git diff | cadre run --agent reviewer   # from stdin')).toEqual([['run', '--agent', 'reviewer']]);
    expect(cadreInvocations('CADRE_MODEL=x npx -y cadre mcp --model "a b"')).toEqual([['mcp', '--model', 'a b']]);
    expect(cadreInvocations('claude mcp add cadre --env K=v -- npx -y cadre mcp')).toEqual([['mcp']]);
    expect(cadreInvocations('echo cadre run')).toEqual([]);
  });

  it('fails on a link to a missing file or heading, and passes the ones that resolve', async () => {
    const root = await fakeRepository('[a](docs/a.md#usage) [b](docs/b.md) [c](#nowhere) [d](docs/a.md#missing) [e](https://example.com/x.md)\n', {
      'docs/a.md': '# A\n\n## Usage\n',
    });
    const problems = await checkDocs(root, ['README.md']);
    expect(problems.map((problem) => problem.message)).toEqual([
      'link to docs/b.md: docs/b.md does not exist',
      'link to #nowhere: README.md has no heading #nowhere',
      'link to docs/a.md#missing: docs/a.md has no heading #missing',
    ]);
  });

  it('fails on an unknown command or option, in code blocks and inline code, and passes synopsis notation', async () => {
    const root = await fakeRepository(
      [
        '```sh',
        'npx cadre run --modle anthropic:x "hi"',
        'cadre frobnicate',
        'cadre run [PROMPT] [--agent NAME] [--session ID | --continue]',
        'cadre mcp trust [NAME...]',
        'npx cadre-scripted-server --script a.yaml --prot 1',
        '```',
        'Answer with `cadre approve ID --forever`, or `cadre approve ID --always`.',
        '',
      ].join('\n'),
    );
    const problems = await checkDocs(root, ['README.md']);
    expect(problems.map((problem) => [problem.line, problem.message.split(':')[0]])).toEqual([
      [2, 'cadre run has no option --modle'],
      [3, 'cadre has no command frobnicate'],
      [6, 'cadre-scripted-server has no option --prot'],
      [8, 'cadre approve has no option --forever'],
    ]);
  });

  it("fails on an example that imports cadre's sources instead of the package", async () => {
    const root = await fakeRepository("```ts\nimport { startDashboard } from './src/server/index.ts';\nimport { createCadre } from 'cadre';\n```\n");
    expect((await checkDocs(root, ['README.md'])).map((problem) => [problem.line, problem.message.split(';')[0]])).toEqual([
      [2, "an example imports cadre's sources"],
    ]);
  });

  it('anchors headings as GitHub does', () => {
    expect([...anchorsOf("# Workers: `queue: redis://...`\n## MCP servers for cadre's agents\n## A\n## A\n```\n# not a heading\n```\n")]).toEqual([
      'workers-queue-redis',
      'mcp-servers-for-cadres-agents',
      'a',
      'a-1',
    ]);
  });
});

describe("cadre's messages", () => {
  it('point to docs that exist and that the package ships', async () => {
    const sources = (await readdir(join(repository, 'src'), { recursive: true })).filter((path) => path.endsWith('.ts') && !/\.test\.ts$|fixtures/.test(path));
    const named = new Set<string>();
    for (const path of sources)
      for (const match of (await readFile(join(repository, 'src', path), 'utf8')).matchAll(/\bdocs\/[\w/-]+\.md\b/g)) named.add(match[0]);
    expect(named).toContain('docs/testing.md');
    expect([...named].filter((doc) => documentationFiles().indexOf(doc) < 0)).toEqual([]);
    const { files } = JSON.parse(await readFile(join(repository, 'package.json'), 'utf8')) as { files: string[] };
    expect(files).toEqual(expect.arrayContaining(['docs', 'README.md']));
  });
});

describe('the own-loop snippet', () => {
  it('ends the stream as examples/own-loop does: not with the loop, after the last run card', async () => {
    const page = await readFile(join(repository, 'docs', 'own-ai-sdk-app.md'), 'utf8');
    const server = await readFile(join(repository, 'examples', 'own-loop', 'server.ts'), 'utf8');
    const loopStream = /toUIMessageStream\(\{ stream: result\.stream, sendStart: false, sendFinish: false \}\)/;
    expect(server).toMatch(loopStream);
    expect(page).toMatch(loopStream);
    expect(page.indexOf("writer.write({ type: 'finish' })")).toBeGreaterThan(page.indexOf('await cadre.writeRunParts('));
  });
});
