import { describe, expect, it } from 'vitest';
import type { CliContext } from './cli-context.ts';
import { serveCommand } from './serve.ts';

describe('cadre serve', () => {
  it('announces itself as one JSON line under --json, and stops on a signal', async () => {
    let stdout = '';
    const context: CliContext = {
      cwd: process.cwd(),
      env: { HOME: '/nonexistent', CADRE_DB: ':memory:' },
      stdin: { isTTY: true, async *[Symbol.asyncIterator]() {} },
      stdout: { write: (text) => ((stdout += text), true) },
      stderr: { write: () => true },
    };
    const stop = new AbortController();
    const served = serveCommand(context, { host: '127.0.0.1', port: '0', json: true }, stop.signal);
    await expect.poll(() => stdout, { timeout: 10_000 }).toContain('\n');
    const line = JSON.parse(stdout);
    expect(line).toEqual({ type: 'serve-ready', url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+/), token: null });
    const response = await fetch(`${line.url.replace(/\/$/, '')}/api/sessions`);
    expect(response.status).toBe(200);
    stop.abort();
    expect(await served).toBe(0);
    expect(stdout.trim().split('\n')).toHaveLength(1);
  });
});
