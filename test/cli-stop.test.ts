import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunRecord } from '../src/store/records.ts';
import { createWorkspace, type Workspace } from './helpers/cadre-cli.ts';

let workspace: Workspace;
beforeAll(async () => {
  workspace = await createWorkspace();
});
afterAll(() => workspace.close());

async function runById(runId: string): Promise<RunRecord> {
  const shown = await workspace.json<{ run: RunRecord }>(['show', runId]);
  return shown.run;
}

describe('a person stops work', () => {
  it('cadre stop RUN_ID from a second process cancels a background run within 2 s, and the first process exits', async () => {
    const first = workspace.start(['run', ...workspace.modelFlags, 'slow background']);
    const [, runId] = await first.waitForStderr(/\[(run_\w+) scout\] started/);
    const stop = await workspace.run(['stop', runId, '--db', workspace.database]);
    expect(stop.code).toBe(0);
    // Within 2 s of the request being stored, the run has ended in the first process (the second
    // process's own start-up is not part of it: on a loaded machine it alone can take seconds).
    const stopped = await runById(runId);
    expect(stopped.stop_requested_at).not.toBeNull();
    expect(Date.parse(stopped.ended_at!) - Date.parse(stopped.stop_requested_at!)).toBeLessThan(2_000);
    expect(stop.stdout).toContain(`${runId}  scout  canceled_by_user`);
    const result = await first.exited;
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/\[run_\w+ scout\] canceled_by_user/);
    // The parent hears of the stop by notification, and answers it before cadre run returns; its
    // answer from before the stop is on stdout too.
    expect(result.stdout).toBe('Started it in the background.\nNoted the notification.\n');
    expect((await runById(runId)).status).toBe('canceled_by_user');
  });

  it('Ctrl-C during a foreground run exits 130 and cancels the run', async () => {
    const first = workspace.start(['run', ...workspace.modelFlags, 'slow foreground']);
    const [, runId] = await first.waitForStderr(/\[(run_\w+) scout\] started/);
    first.child.kill('SIGINT');
    const result = await first.exited;
    expect(result.code).toBe(130);
    expect(result.stderr).toContain('Stopping the session and its runs');
    expect(result.stderr).toMatch(/\[run_\w+ scout\] canceled_by_user/);
    expect((await runById(runId)).status).toBe('canceled_by_user');
  });

  it('cadre stop SESSION_ID from a second process stops the session, and the first process exits 130', async () => {
    const first = workspace.start(['run', ...workspace.modelFlags, 'slow foreground']);
    const [, runId] = await first.waitForStderr(/\[(run_\w+) scout\] started/);
    const run = await runById(runId);
    const stop = await workspace.run(['stop', run.parent_session_id, '--db', workspace.database]);
    expect(stop.code).toBe(0);
    expect(stop.stdout).toContain(`${runId}  scout  canceled_by_user`);
    const result = await first.exited;
    expect(result.code).toBe(130);
    expect((await runById(runId)).status).toBe('canceled_by_user');
  });

  it('cadre stop takes the short id the live view shows for an active run', async () => {
    const first = workspace.start(['run', ...workspace.modelFlags, 'slow background']);
    const [, runId] = await first.waitForStderr(/\[(run_\w+) scout\] started/);
    const stop = await workspace.run(['stop', runId.slice(-6).toLowerCase(), '--db', workspace.database]);
    expect(stop.code).toBe(0);
    expect(stop.stdout).toContain(`${runId}  scout  canceled_by_user`);
    expect((await first.exited).code).toBe(0);
    expect((await runById(runId)).status).toBe('canceled_by_user');
  });

  it('answers an unknown id with exit 2', async () => {
    const result = await workspace.run(['stop', 'run_unknown', '--db', workspace.database]);
    expect(result.code).toBe(2);
    expect(result.stderr.trim()).toBe("cadre: No run or session 'run_unknown'. List them with: cadre runs, cadre sessions");
  });
});
