import { afterEach, describe, expect, it } from 'vitest';
import type { Cadre } from '../runtime/create-cadre.ts';
import { createDashboardApp } from './create-server.ts';
import { createTestCadre } from './server-fixtures.ts';

let cadre: Cadre | undefined;
afterEach(async () => {
  await cadre?.close();
});

describe('GET /api/agents', () => {
  it('lists the agents with the colour of their runs as #rrggbb, null for none', async () => {
    cadre = createTestCadre();
    const response = await createDashboardApp({ cadre }).request('/api/agents');
    const { agents } = (await response.json()) as { agents: Array<{ name: string; color: string | null; mode: string }> };
    expect(agents.map((agent) => [agent.name, agent.color])).toEqual([
      ['general', null],
      ['main', null],
      ['writer', '#8e4ec6'],
    ]);
  });
});
