import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { CliContext } from './cli-context.ts';
import { main } from './main.ts';

async function script(shell: string): Promise<string> {
  let text = '';
  const context: CliContext = {
    cwd: process.cwd(),
    env: {},
    stdin: { isTTY: true, async *[Symbol.asyncIterator]() {} },
    stdout: { write: (chunk) => ((text += chunk), true) },
    stderr: { write: () => true },
  };
  expect(await main(['completion', shell], context)).toBe(0);
  return text;
}

/** What bash completes for the words of a command line, the last one being completed. */
function completeInBash(bashScript: string, words: string[]): string[] {
  const program = `${bashScript}
COMP_WORDS=(${words.map((word) => `'${word}'`).join(' ')}); COMP_CWORD=${words.length - 1}
_cadre_completion
printf '%s\\n' "\${COMPREPLY[@]}"`;
  return execFileSync('bash', ['--norc', '--noprofile', '-c', program], { encoding: 'utf8' }).split('\n').filter(Boolean);
}

function installed(shell: string): boolean {
  try {
    execFileSync(shell, ['-c', 'exit 0']);
    return true;
  } catch {
    return false;
  }
}

describe('cadre completion', () => {
  it('writes a bash script that bash accepts and that completes commands, flags and values', async () => {
    const bash = await script('bash');
    execFileSync('bash', ['-n'], { input: bash });
    expect(completeInBash(bash, ['cadre', 'r'])).toEqual(['run', 'runs']);
    expect(completeInBash(bash, ['cadre', 'run', '--con'])).toEqual(['--continue', '--config']);
    expect(completeInBash(bash, ['cadre', '--db', 'x.db', 'runs', '--li'])).toEqual(['--limit']);
    expect(completeInBash(bash, ['cadre', 'export', 'ses_1', '--format', ''])).toEqual(['json', 'markdown']);
    expect(completeInBash(bash, ['cadre', 'completion', ''])).toEqual(expect.arrayContaining(['bash', 'zsh', 'fish']));
    expect(completeInBash(bash, ['cadre', 'run', '--approvals', ''])).toEqual(['ask', 'wait', 'deny']);
    expect(completeInBash(bash, ['cadre', 'run', '--approvals', 'w'])).toEqual(['wait']);
    expect(completeInBash(bash, ['cadre', 'worktr'])).toEqual(['worktrees', 'worktree']);
    expect(completeInBash(bash, ['cadre', 'worktree', ''])).toEqual(expect.arrayContaining(['diff', 'merge', 'remove']));
    expect(completeInBash(bash, ['cadre', 'worktree', 'merge', 'run_1', '--sq'])).toEqual(['--squash']);
    expect(completeInBash(bash, ['cadre', 'worktree', 'remove', 'run_1', '--fo'])).toEqual(['--force']);
  });

  it('writes zsh and fish scripts that name every command and its flags', async () => {
    const zsh = await script('zsh');
    const fish = await script('fish');
    expect(zsh.startsWith('#compdef cadre\n')).toBe(true);
    for (const command of ['run', 'agents', 'sessions', 'runs', 'show', 'stop', 'worktrees', 'worktree', 'export', 'serve', 'completion', 'version']) {
      expect(zsh).toContain(`'${command}:`);
      expect(fish).toContain(`-a ${command} `);
    }
    expect(zsh).toContain("{-c,--continue}'[continue the most recent session]'");
    expect(fish).toContain("-n '__fish_seen_subcommand_from run' -s c -l continue");
    expect(fish).toContain('-l db -r -F');
    expect(zsh).toContain(':value:(ask wait deny)');
    expect(fish).toContain("-l approvals -x -a 'ask wait deny'");
  });

  it.skipIf(!installed('zsh'))('writes a zsh script that zsh accepts', async () => {
    execFileSync('zsh', ['-n'], { input: await script('zsh') });
  });

  it.skipIf(!installed('fish'))('writes a fish script that fish accepts and that completes commands and values', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'cadre-fish-'));
    const file = join(folder, 'cadre.fish');
    await writeFile(file, await script('fish'));
    onTestFinished(() => rm(folder, { recursive: true, force: true }));
    execFileSync('fish', ['-n', file]);
    const complete = (line: string) =>
      execFileSync('fish', ['-c', `source ${file}; complete -C '${line}'`], { encoding: 'utf8' })
        .split('\n')
        .filter(Boolean)
        .map((entry) => entry.split('\t')[0]);
    expect(complete('cadre ru')).toEqual(['run', 'runs']);
    expect(complete('cadre export x --format ')).toEqual(['json', 'markdown']);
  });

  it('refuses a shell it does not know with exit code 2', async () => {
    let error = '';
    const context: CliContext = {
      cwd: process.cwd(),
      env: {},
      stdin: { isTTY: true, async *[Symbol.asyncIterator]() {} },
      stdout: { write: () => true },
      stderr: { write: (chunk) => ((error += chunk), true) },
    };
    expect(await main(['completion', 'powershell'], context)).toBe(2);
    expect(error).toMatch(/^cadre: .*'powershell' is invalid/);
  });
});
