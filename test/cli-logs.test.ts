import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkspace, type CadreProcess, type Workspace } from './helpers/cadre-cli.ts';

let workspace: Workspace;
beforeAll(async () => {
  workspace = await createWorkspace();
});
afterAll(() => workspace.close());

/** `cadre serve --json --port 0 ...args`; resolves with its address once it is ready. */
async function serve(args: string[]): Promise<{ process: CadreProcess; url: string }> {
  const process = workspace.start(['serve', '--json', '--port', '0', ...workspace.modelFlags, ...args]);
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve never got ready: ${process.output.stderr}`)), 20_000);
    process.child.stdout!.on('data', () => {
      const line = process.output.stdout.split('\n').find((text) => text.startsWith('{'));
      if (line) {
        clearTimeout(timer);
        resolve((JSON.parse(line) as { url: string }).url);
      }
    });
  });
  return { process, url };
}

describe('cadre serve logs', () => {
  it('logs each request as a JSON line on stderr (not a terminal), and none at --log-level warn', async () => {
    const served = await serve([]);
    expect((await fetch(new URL('/api/sessions?limit=5', served.url))).status).toBe(200);
    expect((await fetch(new URL('/api/runs/run_nope', served.url))).status).toBe(404);
    served.process.child.kill('SIGTERM');
    const result = await served.process.exited;
    const entries = result.stderr
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line));
    expect(entries).toEqual([
      expect.objectContaining({
        level: 'info',
        name: 'cadre',
        msg: 'request',
        method: 'GET',
        path: '/api/sessions',
        status: 200,
        durationMs: expect.any(Number),
        time: expect.any(Number),
      }),
      expect.objectContaining({ level: 'info', msg: 'request', method: 'GET', path: '/api/runs/run_nope', status: 404 }),
    ]);

    const quiet = await serve(['--log-level', 'warn']);
    expect((await fetch(new URL('/api/sessions', quiet.url))).status).toBe(200);
    quiet.process.child.kill('SIGTERM');
    expect((await quiet.process.exited).stderr).not.toContain('"msg":"request"');
  });
});
