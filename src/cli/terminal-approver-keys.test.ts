import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyAnswer } from './terminal-approver.ts';

let directory: string;
let driver: string;

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'cadre-pty-'));
  driver = join(directory, 'ask.ts');
  const module = (name: string) => JSON.stringify(new URL(name, import.meta.url).pathname);
  await writeFile(
    driver,
    [
      `import { createTerminalApprover } from ${module('./terminal-approver.ts')};`,
      `import { approvalFixture } from ${module('../store/store-approvals.case.ts')};`,
      `const approver = createTerminalApprover({ input: process.stdin, output: process.stdout, onInterrupt: () => process.stdout.write('INTERRUPTED\\n') });`,
      `approver(approvalFixture(), { signal: new AbortController().signal }).then(`,
      `  (answer) => process.stdout.write('ANSWER ' + JSON.stringify(answer) + ' raw=' + process.stdin.isRaw + '\\n'),`,
      `  (error) => process.stdout.write('REJECTED ' + error.message + '\\n'),`,
      `);`,
    ].join('\n'),
  );
});

afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

/**
 * Runs the approver on a real pseudo-terminal (util-linux `script`), types `keys` one chunk at a
 * time once the question shows, never pressing Enter unless a key is one, and returns what the
 * terminal showed.
 */
function onTerminal(keys: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qec', `${JSON.stringify(process.execPath)} ${JSON.stringify(driver)}`, '/dev/null'], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    let shown = '';
    let typed = 0;
    let next: NodeJS.Timeout | undefined;
    const type = () => {
      clearTimeout(next);
      if (typed >= keys.length) return;
      child.stdin.write(keys[typed++]);
      // A key that shows nothing new (an arrow) is followed by the next one after a pause.
      next = setTimeout(type, 500);
    };
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no answer; the terminal showed: ${JSON.stringify(shown)}`));
    }, 15_000);
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      shown += chunk;
      // One key per question shown: the next key goes once the question asks again.
      if (shown.split('Allow? [y]es').length - 1 > typed) type();
      if (/(ANSWER|REJECTED)[^\n]*\n/.test(shown)) {
        clearTimeout(next);
        child.stdin.end();
      }
    });
    child.on('exit', () => {
      clearTimeout(timer);
      clearTimeout(next);
      resolve(shown.replace(/\r/g, ''));
    });
  });
}

describe.runIf(process.platform === 'linux').concurrent('the approval prompt on a real terminal', () => {
  it('answers on one key, without Enter: a means always, and the terminal leaves raw mode', async () => {
    const shown = await onTerminal(['a']);
    expect(shown).toContain('[apr_1] coder (run_1) asks to run: bash npm test');
    expect(shown).toContain('Allow? [y]es / [N]o / [a]lways for this session: always\n');
    expect(shown).toContain('ANSWER {"decision":"approve","always":true} raw=false');
  });

  it('asks again after a key that is no answer, and y approves', async () => {
    const shown = await onTerminal(['x', 'y']);
    expect(shown).toContain('Answer y, n or a. Allow? [y]es / [N]o / [a]lways for this session: yes\n');
    expect(shown).toContain('ANSWER {"decision":"approve"} raw=false');
  });

  it('takes Enter as the default, no, and an arrow key as nothing', async () => {
    expect(await onTerminal(['\r'])).toContain('for this session: no\nANSWER {"decision":"deny"}');
    const afterArrow = await onTerminal(['\u001b[A', 'n']);
    expect(afterArrow).toContain('ANSWER {"decision":"deny"}');
    expect(afterArrow).not.toContain('always');
  });

  it('passes Ctrl-C on as an interrupt', async () => {
    const shown = await onTerminal(['\u0003']);
    expect(shown).toContain('REJECTED Interrupted at the question.');
    expect(shown).toContain('INTERRUPTED');
  });
});

describe('keyAnswer', () => {
  it.each([
    ['y', { decision: 'approve' }],
    ['Y', { decision: 'approve' }],
    ['n', { decision: 'deny' }],
    ['\r', { decision: 'deny' }],
    ['A', { decision: 'approve', always: true }],
    ['q', null],
  ])('reads the key %j as %j', (key, expected) => {
    expect(keyAnswer(key)).toEqual(expected);
  });
});
