import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseScript } from './script.ts';
import { scriptedServerOptions, usage } from './scripted-server-usage.ts';

const bin = fileURLToPath(new URL('../../bin/cadre-scripted-server.js', import.meta.url));

describe('cadre-scripted-server --help', () => {
  it('names every option the command line reads', () => {
    for (const [name, option] of Object.entries(scriptedServerOptions)) {
      expect(usage).toMatch(new RegExp(`^  ${'short' in option ? `-${option.short}, ` : ''}--${name}\\b`, 'm'));
    }
  });

  it('shows a script that loads', () => {
    const example = usage.slice(usage.indexOf('\n', usage.indexOf('A script,')) + 1, usage.indexOf('\n\n', usage.indexOf('A script,')));
    const script = parseScript(parse(example.replace(/^ {2}/gm, '')));
    expect(script).toHaveLength(2);
  });

  it('prints it from the command, with exit code 0; a bad command line gets one line and exit code 2', { timeout: 30_000 }, async () => {
    const help = await promisify(execFile)(process.execPath, [bin, '--help']);
    expect(help.stdout).toBe(`${usage}\n`);
    const bad = await promisify(execFile)(process.execPath, [bin, '--prot', '1']).catch((error: { code: number; stderr: string }) => error);
    expect('code' in bad && bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^cadre-scripted-server: Unknown option '--prot'\nUsage: cadre-scripted-server --script FILE/);
  });
});
