import { describe, expect, it } from 'vitest';
import { ConfigError } from '../errors/config-error.ts';
import { workflowApprovals } from './workflow.ts';

describe('workflowApprovals', () => {
  it('denies asks by default, waits with --approvals wait, approves with --yes', () => {
    expect(workflowApprovals({})).toBe('deny');
    expect(workflowApprovals({ approvals: 'wait' })).toBe('wait');
    expect(workflowApprovals({ approvals: 'deny' })).toBe('deny');
    expect(workflowApprovals({ yes: true })).toBe('yes');
  });

  it('refuses a mode a workflow cannot honour, and --yes with --approvals', () => {
    expect(() => workflowApprovals({ approvals: 'ask' })).toThrow(ConfigError);
    expect(() => workflowApprovals({ yes: true, approvals: 'wait' })).toThrow(/leave out/);
  });
});
