import { describe, expect, it } from 'vitest';
import type { AgentDefinition } from '../agents/agent-definition.ts';
import { compilePermissions, type PermissionsConfig } from '../permissions/permissions.ts';
import type { RunRecord } from '../store/records.ts';
import { createHarnessAllowance, createHarnessToolRules, toolDecision } from './harness-approver.ts';

const layers = (rules: PermissionsConfig, agent?: PermissionsConfig, session?: PermissionsConfig) => ({
  rules: compilePermissions(rules, 'config'),
  agentRules: compilePermissions(agent, 'agent'),
  sessionRules: compilePermissions(session, 'session'),
});

describe('toolDecision: what a program that would not ask is told of a tool', () => {
  it('denies a tool every call of which is denied, by tool or by risk, in the configuration or the agent', () => {
    expect(toolDecision(layers({ deny: ['read_file'] }), 'read_file', 'read')).toBe('deny');
    expect(toolDecision(layers({ deny: ['read'] }), 'grep', 'read')).toBe('deny');
    expect(toolDecision(layers({}, { deny: ['read_file'] }), 'read_file', 'read')).toBe('deny');
    expect(toolDecision(layers({ deny: ['bash', 'bash(rm *)'] }), 'bash', 'exec')).toBe('deny');
  });

  it('asks where some call of it may be asked about or denied, or let through a deny', () => {
    expect(toolDecision(layers({ ask: ['read_file'] }), 'read_file', 'read')).toBe('ask');
    expect(toolDecision(layers({ deny: ['read_file(.env)'] }), 'read_file', 'read')).toBe('ask');
    expect(toolDecision(layers({}, { ask: ['read_file(secrets/*)'] }), 'read_file', 'read')).toBe('ask');
    expect(toolDecision(layers({ deny: ['read_file'], allow: ['read_file(docs/*)'] }), 'read_file', 'read')).toBe('ask');
    // The defaults ask for running commands and the network.
    expect(toolDecision(layers({}), 'bash', 'exec')).toBe('ask');
    expect(toolDecision(layers({}), 'WebFetch', 'network')).toBe('ask');
    expect(toolDecision(layers({ allow: ['bash'], deny: ['bash(git push*)'] }), 'bash', 'exec')).toBe('ask');
  });

  it('leaves to the program a tool every call of which is allowed', () => {
    expect(toolDecision(layers({}), 'read_file', 'read')).toBe('allow');
    expect(toolDecision(layers({ allow: ['bash'] }), 'bash', 'exec')).toBe('allow');
    expect(toolDecision(layers({ allow: ['bash', 'bash(npm test*)'] }), 'bash', 'exec')).toBe('allow');
    // An "always" a person gave in the session answers the asks of the whole tool.
    expect(toolDecision(layers({}, undefined, { allow: ['bash'] }), 'bash', 'exec')).toBe('allow');
  });
});

describe('createHarnessToolRules', () => {
  it("names each of the program's tools cadre's rules do not allow outright, with the configuration's, the agent's and the session's rules", async () => {
    const toolRules = createHarnessToolRules({
      store: { listSessionRules: async () => [{ rule: 'WebFetch', decision: 'allow' } as never] },
      broker: { request: async () => Promise.reject(new Error('no asks here')) },
      permissions: { allow: ['write'], deny: ['grep'] },
      primarySessionOf: async (id) => id,
      workspaceOf: () => '/work',
    });
    const run = { id: 'run_1', parent_session_id: 'ses_1' } as RunRecord;
    const agent = { name: 'coder', permissions: { ask: ['read_file(.env)'] } } as AgentDefinition;
    expect(await toolRules(run, agent, ['bash', 'read_file', 'write_file', 'grep', 'list_files', 'WebFetch'])).toEqual({
      bash: 'ask',
      read_file: 'ask',
      grep: 'deny',
    });
  });
});

describe('createHarnessAllowance', () => {
  it('asks once about the folder the program works in, then says it waits on its model, and allows what was approved', async () => {
    const asked: { argument: string | null; summary: string }[] = [];
    const allowance = createHarnessAllowance({
      store: { listSessionRules: async () => [] },
      broker: {
        request: async (ask: { argument: string | null; summary: string }) => {
          asked.push(ask);
          return { status: 'approved' } as never;
        },
      } as never,
      permissions: { allow: ['write'] },
      primarySessionOf: async (id) => id,
      workspaceOf: () => '/work',
    });
    const activities: string[] = [];
    const live = { setActivity: (activity: { kind: string }) => activities.push(activity.kind), writePending: () => {} };
    const run = { id: 'run_1', parent_session_id: 'ses_1' } as RunRecord;
    const agent = { name: 'coder', harness: 'codex' } as AgentDefinition;
    const allowed = await allowance(run, agent, new AbortController().signal, live as never, '/work/.cadre/worktrees/run_1');
    expect(asked.map((ask) => ask.argument)).toEqual(['run commands in /work/.cadre/worktrees/run_1']);
    expect(activities).toEqual(['awaiting_approval', 'waiting_for_model']);
    expect(allowed).toMatchObject({ write: true, exec: true, network: false });
  });
});
