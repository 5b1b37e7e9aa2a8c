import { afterEach, describe, expect, it } from 'vitest';
import type { Cadre } from '../runtime/create-cadre.ts';
import { createSandbox } from '../tools/sandbox/create-sandbox.ts';
import { createDashboardApp } from './create-server.ts';
import { createTestCadre } from './server-fixtures.ts';

const open: Cadre[] = [];
afterEach(async () => {
  for (const cadre of open.splice(0)) await cadre.close();
});

describe('GET /api/sandbox', () => {
  it("says how the runtime's bash is confined, and why not when it is not", async () => {
    const cadre = createTestCadre();
    open.push(cadre);
    const missing = async () => ({ available: false as const, reason: 'bubblewrap (bwrap) is not installed' });
    const app = createDashboardApp({ cadre, sandbox: createSandbox({ root: '/project', detect: missing }) });
    expect(await (await app.request('/api/sandbox')).json()).toEqual({
      sandbox: {
        mode: 'auto',
        kind: 'none',
        confined: false,
        network: true,
        writable: ['anywhere the user can'],
        reason: 'bubblewrap (bwrap) is not installed',
      },
      workspace: null,
    });
    const boxed = createDashboardApp({
      cadre,
      sandbox: createSandbox({ root: '/project', detect: async () => ({ available: true, kind: 'bubblewrap', program: '/usr/bin/bwrap' }) }),
    });
    expect((await (await boxed.request('/api/sandbox')).json()).sandbox).toMatchObject({
      kind: 'bubblewrap',
      confined: true,
      network: false,
      writable: ['/project', '/tmp (private to each command)'],
    });
    expect(await (await createDashboardApp({ cadre }).request('/api/sandbox')).json()).toEqual({ sandbox: null, workspace: null });
  });

  it("says whether the workspace's own configuration is trusted, and what was left out", async () => {
    const cadre = createTestCadre();
    open.push(cadre);
    const workspace = { state: 'untrusted' as const, leftOut: ["mcpServers.evil (sh -c 'touch x')"] };
    expect((await (await createDashboardApp({ cadre, workspace }).request('/api/sandbox')).json()).workspace).toEqual(workspace);
  });
});
