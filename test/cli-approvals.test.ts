import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApprovalRecord, RunEventRecord, RunRecord } from '../src/store/records.ts';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { createWorkspace, type Workspace } from './helpers/cadre-cli.ts';

let workspace: Workspace;
/** A config that makes reads (the scout's list_files) ask for approval. */
let askConfig: string[];
beforeAll(async () => {
  workspace = await createWorkspace();
  await writeFile(join(workspace.cwd, 'ask.config.json'), JSON.stringify({ permissions: { ask: ['read'] } }));
  askConfig = ['--config', 'ask.config.json'];
});
afterAll(() => workspace.close());

async function eventsOf(runId: string): Promise<RunEventRecord[]> {
  return (await workspace.json<{ run: RunRecord; events: RunEventRecord[] }>(['show', runId])).events;
}

describe('asks for approval from the command line', () => {
  it('waits with --approvals wait, lists the ask with cadre approvals, and runs the tool once cadre approve answers from another process', async () => {
    const first = workspace.start(['run', ...workspace.modelFlags, ...askConfig, '--approvals', 'wait', 'delegate please']);
    const [, approvalId] = await first.waitForStderr(/\[(apr_\w+)\] scout \(run_\w+\) asks to run: list_files/);
    expect(first.output.stderr).toContain(`(answer: cadre approve ${approvalId} [--deny] [--always])`);

    const listed = await workspace.json<ApprovalRecord[]>(['approvals']);
    expect(listed).toMatchObject([{ id: approvalId, agent: 'scout', tool: 'list_files', status: 'pending' }]);
    const table = await workspace.run(['approvals', '--db', workspace.database]);
    expect(table.stdout).toMatch(
      new RegExp(`^ID +RUN +AGENT +TOOL +SUMMARY +WAITING SINCE\\n${approvalId} +run_\\w+ +scout +list_files +list_files[^\\n]* +\\d{4}-`),
    );

    const approve = await workspace.run(['approve', approvalId, '--db', workspace.database]);
    expect(approve.code).toBe(0);
    expect(approve.stdout).toMatch(new RegExp(`^${approvalId} approved: list_files[^\\n]*\\n$`));
    const result = await first.exited;
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(`[${approvalId}] approved by person: list_files`);
    expect(result.stdout).toContain('Final answer');

    const again = await workspace.run(['approve', approvalId, '--deny', '--db', workspace.database]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(new RegExp(`^cadre: ${approvalId} was already approved by person: list_files[^\\n]*\\n$`));
    const againAsJson = await workspace.run(['--json', 'approve', approvalId, '--db', workspace.database]);
    expect(againAsJson.code).toBe(1);
    expect(JSON.parse(againAsJson.stdout)).toMatchObject({
      type: 'error',
      message: expect.stringContaining('was already approved by person'),
      approval: { id: approvalId },
    });
    expect(await workspace.json<ApprovalRecord[]>(['approvals'])).toEqual([]);
    const [ask] = (await workspace.json<RunRecord[]>(['runs'])).filter((run) => run.agent === 'scout');
    const types = (await eventsOf(ask.id)).map((event) => event.type);
    expect(types).toContain('approval-request');
    expect(types).toContain('approval-resolve');
  });

  it('shows what each ask would do, a diff for edits and writes and the whole command for bash, secrets redacted: in the log, in cadre approvals and its JSON', async () => {
    const secret = 'sk-e2e-secret-0123456789';
    await writeFile(join(workspace.cwd, 'settings.env'), `TOKEN=${secret}\nMODE=dev\n`);
    const first = workspace.start(['run', ...workspace.modelFlags, '--approvals', 'wait', 'change the settings'], { env: { E2E_API_KEY: secret } });
    // The three asks come in any order, each line with its preview under it.
    await first.waitForStderr(/^(?=[\s\S]*\n    \+MODE=prod\n)(?=[\s\S]*\n    \+A new page\.\n)(?=[\s\S]*\n    echo two\n)/);
    const editDiff = [
      '    --- a/settings.env',
      '    +++ b/settings.env',
      '    @@ -1,2 +1,2 @@',
      '     TOKEN=[redacted]',
      '    -MODE=dev',
      '    +MODE=prod',
    ].join('\n');
    expect(first.output.stderr).toContain(editDiff);
    expect(first.output.stderr).toContain(['    --- /dev/null', '    +++ b/docs/new.md', '    @@ -0,0 +1,2 @@', '    +# New', '    +A new page.'].join('\n'));
    expect(first.output.stderr).toContain(['    $ echo one', '    echo two'].join('\n'));

    const listed = await workspace.json<ApprovalRecord[]>(['approvals']);
    expect(listed.map((approval) => approval.preview)).toEqual(
      expect.arrayContaining([
        { kind: 'diff', path: 'settings.env', diff: editDiff.replaceAll('\n    ', '\n').slice(4) },
        { kind: 'diff', path: 'docs/new.md', diff: '--- /dev/null\n+++ b/docs/new.md\n@@ -0,0 +1,2 @@\n+# New\n+A new page.' },
        { kind: 'command', command: 'echo one\necho two' },
      ]),
    );
    const table = await workspace.run(['approvals', '--db', workspace.database]);
    expect(table.stdout).toContain(editDiff);
    expect(table.stdout).toMatch(/\napr_\w+  bash echo one echo two\n    \$ echo one\n    echo two\n/);
    expect(`${table.stdout}${first.output.stderr}`).not.toContain(secret);

    for (const approval of listed) expect((await workspace.run(['approve', approval.id, '--db', workspace.database])).code).toBe(0);
    const result = await first.exited;
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Changed the settings.');
    expect(await readFile(join(workspace.cwd, 'settings.env'), 'utf8')).toBe(`TOKEN=${secret}\nMODE=prod\n`);
    expect(await readFile(join(workspace.cwd, 'docs', 'new.md'), 'utf8')).toBe('# New\nA new page.\n');
  });

  it('lets exactly one of two people answering at once from two processes win', async () => {
    const first = workspace.start(['run', ...workspace.modelFlags, ...askConfig, '--approvals', 'wait', 'delegate please']);
    const [, approvalId] = await first.waitForStderr(/\[(apr_\w+)\] scout \(run_\w+\) asks to run: list_files/);
    const [approve, deny] = await Promise.all([
      workspace.run(['approve', approvalId, '--json', '--db', workspace.database]),
      workspace.run(['approve', approvalId, '--deny', '--json', '--db', workspace.database]),
    ]);
    expect([approve.code, deny.code].sort()).toEqual([0, 1]);
    const winner = approve.code === 0 ? 'approved' : 'denied';
    // Under --json both answers are one JSON line: the winner's resolution, the loser's error.
    const [won, lost] = approve.code === 0 ? [approve, deny] : [deny, approve];
    expect(JSON.parse(won.stdout)).toMatchObject({ type: 'approval-resolve', approval: { id: approvalId, status: winner } });
    expect(JSON.parse(lost.stdout)).toMatchObject({ type: 'error', approval: { id: approvalId, status: winner } });
    const result = await first.exited;
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(`[${approvalId}] ${winner} by person`);
    expect(result.stderr.match(new RegExp(`\\[${approvalId}\\] (approved|denied) by`, 'g'))).toHaveLength(1);
    const [stored] = (await workspace.json<ApprovalRecord[]>(['approvals'])).filter((approval) => approval.id === approvalId);
    expect(stored).toBeUndefined();
  });

  it('denies at once off a terminal, and the model hears how to allow it', async () => {
    const result = await workspace.run(['run', ...workspace.modelFlags, ...askConfig, 'delegate please']);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(
      /\[apr_\w+\] denied by no_approver: list_files[^\n]*  \(nobody could answer here; to let asks through, run with --approvals wait to answer them from elsewhere, or --yes to approve them all\)\n/,
    );
    // Nobody can answer it from elsewhere either, so its line offers no `cadre approve`.
    expect(result.stderr).toMatch(/\[apr_\w+\] scout \(run_\w+\) asks to run: list_files[^\n(]*\n/);
    expect(result.stderr).not.toContain('cadre approve');
    const [run] = (await workspace.json<RunRecord[]>(['runs'])).filter((each) => each.agent === 'scout');
    const store = createSqliteStore({ path: workspace.database });
    try {
      const toolMessages = (await store.listMessages(run.child_session_id)).filter((message) => message.role === 'tool');
      const text = JSON.stringify(toolMessages);
      expect(text).toMatch(/Permission denied: list_files[^:]* was not run: it needs a person’s approval and nobody could answer/);
      expect(text).toContain("--allow 'list_files");
    } finally {
      await store.close();
    }
  });

  it('approves every ask with --yes, and --allow makes the ask go away', async () => {
    const yes = await workspace.run(['run', ...workspace.modelFlags, ...askConfig, '--yes', 'delegate please']);
    expect(yes.code).toBe(0);
    expect(yes.stderr).toMatch(/\[apr_\w+\] approved by flag: list_files/);
    const allowed = await workspace.run(['run', ...workspace.modelFlags, ...askConfig, '--allow', 'list_files', 'delegate please']);
    expect(allowed.code).toBe(0);
    expect(allowed.stderr).not.toContain('apr_');
  });

  it('refuses bad flags and bad rules with exit 2', async () => {
    const mode = await workspace.run(['run', ...workspace.modelFlags, '--approvals', 'maybe', 'echo this']);
    expect(mode.code).toBe(2);
    expect(mode.stderr).toBe("cadre: --approvals must be ask, wait or deny, not 'maybe'.\n");
    const both = await workspace.run(['run', ...workspace.modelFlags, '--approvals', 'wait', '--yes', 'echo this']);
    expect(both.code).toBe(2);
    const rule = await workspace.run(['run', ...workspace.modelFlags, '--deny', 'bash(', 'echo this']);
    expect(rule.code).toBe(2);
    expect(rule.stderr).toContain("Invalid permission rule 'bash('");
    const unknown = await workspace.run(['approve', 'apr_nope', '--db', workspace.database]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe("cadre: No approval 'apr_nope'. List the pending ones with: cadre approvals\n");
  });
});
