import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { approvalFixture } from '../store/store-approvals.case.ts';
import { approvalModeOf } from './approval-mode.ts';
import type { CliContext } from './cli-context.ts';
import { createTerminalApprover, parseAnswer } from './terminal-approver.ts';

function terminal() {
  const input = new PassThrough();
  const output = new PassThrough();
  let shown = '';
  output.setEncoding('utf8').on('data', (chunk: string) => (shown += chunk));
  return { input, output, shown: () => shown };
}

describe('the terminal approver', () => {
  it('pauses the view, shows the ask, takes y, n or a, and resumes the view', async () => {
    const io = terminal();
    const calls: string[] = [];
    const approver = createTerminalApprover({ input: io.input, output: io.output, pause: () => (calls.push('pause'), () => calls.push('resume')) });
    const answer = approver(approvalFixture(), { signal: new AbortController().signal });
    io.input.write('maybe\n');
    io.input.write('a\n');
    expect(await answer).toEqual({ decision: 'approve', always: true });
    expect(calls).toEqual(['pause', 'resume']);
    expect(io.shown()).toContain('[apr_1] coder (run_1) asks to run: bash npm test');
    expect(io.shown()).toContain('Answer y, n or a.');
  });

  it('shows what the call would do under the ask: the diff of an edit, a command the line cuts, a terminal escape in a file made visible', async () => {
    const io = terminal();
    const approver = createTerminalApprover({ input: io.input, output: io.output });
    const diff = '--- a/src/user.js\n+++ b/src/user.js\n@@ -1 +1 @@\n-const name = "\u001b[2Ja";\r\n+const name = "b";';
    const edit = approvalFixture({
      tool: 'edit_file',
      argument: 'src/user.js',
      summary: 'edit_file src/user.js',
      preview: { kind: 'diff', path: 'src/user.js', diff },
    });
    const answer = approver(edit, { signal: new AbortController().signal });
    io.input.write('y\n');
    expect(await answer).toEqual({ decision: 'approve' });
    expect(io.shown()).toContain(
      [
        'asks to run: edit_file src/user.js',
        '    --- a/src/user.js',
        '    +++ b/src/user.js',
        '    @@ -1 +1 @@',
        '    -const name = "\\u001b[2Ja";',
        '    +const name = "b";',
        'Allow?',
      ].join('\n'),
    );

    const command = 'cat > notes.md <<EOF\nhello\nEOF';
    const bash = approvalFixture({ argument: command, summary: 'bash cat > notes.md <<EOF hello EOF', preview: { kind: 'command', command } });
    const second = approver(bash, { signal: new AbortController().signal });
    io.input.write('n\n');
    await second;
    expect(io.shown()).toContain('asks to run: bash cat > notes.md <<EOF hello EOF\n    $ cat > notes.md <<EOF\n    hello\n    EOF\nAllow?');
    const short = approvalFixture({ id: 'apr_short', preview: { kind: 'command', command: 'npm test' } });
    const third = approver(short, { signal: new AbortController().signal });
    io.input.write('n\n');
    await third;
    expect(io.shown()).toContain('[apr_short] coder (run_1) asks to run: bash npm test\nAllow?');
  });

  it('goes away when the ask is answered elsewhere', async () => {
    const io = terminal();
    const controller = new AbortController();
    const answer = createTerminalApprover({ input: io.input, output: io.output })(approvalFixture(), { signal: controller.signal });
    const reason = new Error('answered elsewhere');
    controller.abort(reason);
    await expect(answer).rejects.toBe(reason);
    expect(io.shown()).toContain('(apr_1 no longer waits: answered elsewhere, timed out, or its run ended)');
  });

  it('rejects when the terminal closes before an answer', async () => {
    const io = terminal();
    const answer = createTerminalApprover({ input: io.input, output: io.output })(approvalFixture(), { signal: new AbortController().signal });
    io.input.end();
    await expect(answer).rejects.toThrow('The terminal closed before an answer.');
  });

  it.each([
    ['y', { decision: 'approve' }],
    ['YES', { decision: 'approve' }],
    ['', { decision: 'deny' }],
    ['n', { decision: 'deny' }],
    [' always ', { decision: 'approve', always: true }],
    ['sure', null],
  ])('reads %j as %j', (text, expected) => {
    expect(parseAnswer(text)).toEqual(expected);
  });
});

describe('approvalModeOf', () => {
  const context = (tty: boolean) => ({ stdin: { isTTY: tty }, stdout: { isTTY: tty } }) as unknown as CliContext;

  it('prompts on a terminal and denies elsewhere, unless a flag says otherwise', () => {
    expect(approvalModeOf(context(true), {})).toBe('ask');
    expect(approvalModeOf(context(true), { json: true })).toBe('deny');
    expect(approvalModeOf(context(false), {})).toBe('deny');
    expect(approvalModeOf(context(false), { approvals: 'wait' })).toBe('wait');
    expect(approvalModeOf(context(false), { yes: true })).toBe('yes');
  });

  it('refuses an unknown mode, --yes with --approvals, and ask without a terminal', () => {
    expect(() => approvalModeOf(context(true), { approvals: 'yes' })).toThrow("--approvals must be ask, wait or deny, not 'yes'.");
    expect(() => approvalModeOf(context(true), { approvals: 'wait', yes: true })).toThrow('--yes approves every ask');
    expect(() => approvalModeOf(context(false), { approvals: 'ask' })).toThrow('--approvals ask needs a terminal');
  });
});
