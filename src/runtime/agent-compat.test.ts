import { afterEach, describe, expect, it } from 'vitest';
import { defineAgent } from '../agents/agent-definition.ts';
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts';
import { scriptedLanguageModel, type RespondFunction, type Script } from '../testing/index.ts';
import { createWorkspaceTools } from '../tools/workspace-tools.ts';
import { createCadre, type Cadre, type CadreOptions } from './create-cadre.ts';

const open: Cadre[] = [];
afterEach(async () => {
  for (const cadre of open.splice(0)) await cadre.close();
});

function makeCadre(script: Script | RespondFunction, options: Partial<CadreOptions> = {}) {
  const cadre = createCadre({
    store: createSqliteStore({ path: ':memory:' }),
    model: scriptedLanguageModel(script),
    onError: (error) => {
      throw error;
    },
    ...options,
  });
  open.push(cadre);
  return cadre;
}

describe('agents people already have', () => {
  it('lets the built-in main agent read a file when no tools were given in code', async () => {
    const cadre = makeCadre([{ turns: [{ tool_calls: [{ name: 'read_file', arguments: { path: 'package.json' } }] }, { text: 'It is cadre.' }] }]);
    const session = await cadre.createSession();
    const turn = await cadre.send(session.id, 'Find where sessions are stored');
    expect(turn).toMatchObject({ status: 'completed', text: 'It is cadre.' });
    const toolMessage = (await cadre.store.listMessages(session.id)).find((message) => message.role === 'tool');
    expect(JSON.stringify(toolMessage?.content)).toContain('\\"name\\": \\"cadre\\"');
  });

  it('runs the built-in agents without the read tools when the runtime was given other tools', async () => {
    const cadre = makeCadre([{ turns: [{ text: 'Fine without tools.' }] }], { tools: {} });
    const session = await cadre.createSession();
    expect(await cadre.send(session.id, 'Hello')).toMatchObject({ status: 'completed', text: 'Fine without tools.' });
  });

  it('runs an agent that names a tool this runtime lacks without that tool, as Claude Code does', async () => {
    const builder = defineAgent({ name: 'builder', description: 'Builds.', system: 'BUILDER', tools: ['bash'], mode: 'subagent' });
    const cadre = makeCadre(
      [
        { when: { system_includes: 'BUILDER' }, turns: [{ text: 'Built.' }] },
        { when: { system_includes: 'general-purpose' }, turns: [{ text: 'General did it.' }] },
        {
          turns: [
            {
              tool_calls: [
                {
                  name: 'agent_parallel',
                  arguments: {
                    tasks: [
                      { agent: 'builder', task: 'Build it' },
                      { agent: 'general', task: 'Do it' },
                    ],
                  },
                },
              ],
            },
            { text: 'Both reported.' },
          ],
        },
      ],
      { agents: [builder] },
    );
    const session = await cadre.createSession();
    expect(await cadre.send(session.id, 'Go')).toMatchObject({ status: 'completed', text: 'Both reported.' });
    await cadre.waitForIdle(session.id);
    const runs = await cadre.store.listRuns({ parent_session_id: session.id });
    const byAgent = Object.fromEntries(runs.map((run) => [run.agent, run]));
    expect(byAgent.general.status).toBe('completed');
    expect(byAgent.builder).toMatchObject({ status: 'completed', result: expect.objectContaining({ text: 'Built.' }) });
  });

  it('resolves short model names through modelAliases where the model is made', async () => {
    const reviewer = defineAgent({ name: 'reviewer', description: 'Reviews.', model: 'sonnet', mode: 'all' });
    const opencode = defineAgent({ name: 'coder', description: 'Codes.', model: 'openai/gpt-4o', mode: 'all' });
    const custom = defineAgent({ name: 'fast', description: 'Quick.', model: 'quick', mode: 'all' });
    const cadre = makeCadre([{ turns: [{ text: 'ok' }] }], {
      agents: [reviewer, opencode, custom],
      modelAliases: { quick: 'openai:gpt-4o-mini' },
      env: { ANTHROPIC_API_KEY: 'test-key', OPENAI_API_KEY: 'test-key' },
    });
    expect((await cadre.createSession({ agent: 'reviewer' })).model).toBe('anthropic:claude-sonnet-4-5');
    expect((await cadre.createSession({ agent: 'coder' })).model).toBe('openai:gpt-4o');
    expect((await cadre.createSession({ agent: 'fast' })).model).toBe('openai:gpt-4o-mini');
    expect((await cadre.createSession({ model: 'haiku' })).model).toBe('anthropic:claude-haiku-4-5');
  });

  it("runs an agent whose Claude model cannot be had (no ANTHROPIC_API_KEY) or is unknown on the session's model", async () => {
    const reviewer = defineAgent({ name: 'reviewer', description: 'Reviews.', system: 'REVIEWER', model: 'sonnet', mode: 'subagent' });
    const odd = defineAgent({ name: 'odd', description: 'Odd.', system: 'ODD', model: 'fable', mode: 'subagent' });
    const cadre = makeCadre(
      [
        { when: { system_includes: 'REVIEWER' }, turns: [{ text: 'Reviewed.' }] },
        { when: { system_includes: 'ODD' }, turns: [{ text: 'Odd done.' }] },
        {
          turns: [
            {
              tool_calls: [
                {
                  name: 'agent_parallel',
                  arguments: {
                    tasks: [
                      { agent: 'reviewer', task: 'Review' },
                      { agent: 'odd', task: 'Do' },
                    ],
                  },
                },
              ],
            },
            { text: 'Both.' },
          ],
        },
      ],
      { agents: [reviewer, odd], env: {} },
    );
    const session = await cadre.createSession();
    expect(await cadre.send(session.id, 'Go')).toMatchObject({ status: 'completed', text: 'Both.' });
    await cadre.waitForIdle(session.id);
    const runs = await cadre.store.listRuns({ parent_session_id: session.id });
    expect(runs.map((run) => run.status)).toEqual(['completed', 'completed']);
  });

  it('offers an agent with permissionMode plan only the read tools, and one without tools every tool', async () => {
    const offered: Record<string, string[]> = {};
    const planner = defineAgent({ name: 'planner', description: 'Plans.', system: 'PLANNER', permissionMode: 'plan', mode: 'subagent' });
    const doer = defineAgent({ name: 'doer', description: 'Does.', system: 'DOER', mode: 'subagent' });
    const cadre = makeCadre(
      ({ system, tools }) => {
        for (const name of ['PLANNER', 'DOER']) if (system.includes(name)) offered[name] = tools.filter((tool) => !tool.startsWith('agent')).sort();
        if (system.includes('PLANNER') || system.includes('DOER')) return { text: 'ok' };
        return offered.PLANNER && offered.DOER
          ? { text: 'done' }
          : {
              tool_calls: [
                {
                  name: 'agent_parallel',
                  arguments: {
                    tasks: [
                      { agent: 'planner', task: 'Plan' },
                      { agent: 'doer', task: 'Do' },
                    ],
                  },
                },
              ],
            };
      },
      { agents: [planner, doer], tools: createWorkspaceTools({ root: process.cwd() }) },
    );
    const session = await cadre.createSession();
    expect(await cadre.send(session.id, 'Go')).toMatchObject({ status: 'completed' });
    expect(offered.PLANNER).toEqual(['grep', 'list_files', 'read_file']);
    expect(offered.DOER).toEqual(['bash', 'edit_file', 'grep', 'list_files', 'read_file', 'write_file']);
  });
});
