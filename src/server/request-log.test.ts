import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../logging/create-logger.ts';
import type { Cadre } from '../runtime/create-cadre.ts';
import { createDashboardApp } from './create-server.ts';
import { createTestCadre } from './server-fixtures.ts';

const open: Cadre[] = [];
afterEach(async () => {
  for (const cadre of open.splice(0)) await cadre.close();
});

describe('request logs', () => {
  it('logs each request at info as one JSON line (method, path without the query, status, time) and errors with their cause', async () => {
    const cadre = createTestCadre();
    open.push(cadre);
    const lines: string[] = [];
    const logger = createLogger({ level: 'info', destination: { write: (text) => lines.push(text) } });
    const app = createDashboardApp({ cadre, token: 'tok-123', logger });
    expect((await app.request('/api/sessions?token=tok-123')).status).toBe(200);
    expect((await app.request('/api/nothing-here', { headers: { authorization: 'Bearer tok-123' } })).status).toBe(404);
    expect((await app.request('/api/sessions')).status).toBe(401);
    const entries = lines.map((line) => JSON.parse(line));
    expect(entries.map(({ level, msg, method, path, status }) => ({ level, msg, method, path, status }))).toEqual([
      { level: 'info', msg: 'request', method: 'GET', path: '/api/sessions', status: 200 },
      { level: 'info', msg: 'request', method: 'GET', path: '/api/nothing-here', status: 404 },
      { level: 'info', msg: 'request', method: 'GET', path: '/api/sessions', status: 401 },
    ]);
    expect(entries.every((entry) => typeof entry.durationMs === 'number')).toBe(true);
    expect(lines.join('')).not.toContain('tok-123');
  });

  it('writes nothing at the default level (warn) for requests that went well', async () => {
    const cadre = createTestCadre();
    open.push(cadre);
    const lines: string[] = [];
    const app = createDashboardApp({ cadre, logger: createLogger({ destination: { write: (text) => lines.push(text) } }) });
    await app.request('/api/sessions');
    expect(lines).toEqual([]);
  });
});
