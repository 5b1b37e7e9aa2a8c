import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { bubblewrapBaseArguments } from './bubblewrap-arguments.ts';

/** Which OS sandbox confines commands. */
export type SandboxKind = 'bubblewrap' | 'seatbelt';

/** What {@link detectSandbox} found: a sandbox that really ran a command, or why there is none. */
export type SandboxAvailability =
  | { available: true; kind: SandboxKind /** The program that makes the box. */; program: string }
  | { available: false /** One sentence: what is missing or what failed. */; reason: string };

/** Options of {@link detectSandbox}, for tests. */
export interface DetectSandboxOptions {
  /** @default process.platform */
  platform?: NodeJS.Platform;
  /** Where programs are looked up. @default process.env.PATH */
  path?: string;
  /** How long the probe may take. @default 5000 */
  timeoutMs?: number;
}

/** The first executable named `name` on `path`. */
function findProgram(name: string, path: string): string | undefined {
  for (const directory of path.split(delimiter)) {
    if (directory === '') continue;
    const candidate = join(directory, name);
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** Runs `program args` and resolves with null when it exits 0, else with what it said. */
function probe(program: string, args: string[], timeoutMs: number): Promise<string | null> {
  return new Promise((resolve) => {
    const child = spawn(program, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let said = '';
    child.stderr.on('data', (chunk: Buffer) => (said += chunk.toString('utf8')));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      resolve(`it did not finish within ${timeoutMs} ms`);
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      resolve(error.message);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve(code === 0 ? null : said.trim().split('\n')[0] || `it exited with ${code ?? signal}`);
    });
  });
}

/**
 * Finds the OS sandbox of this machine and checks that it works by running `true` in a box of the
 * same shape commands get (user, pid and network namespaces under bubblewrap; a profile under
 * Seatbelt): bubblewrap may be installed where user namespaces are disabled, as in many containers.
 */
export async function detectSandbox({
  platform = process.platform,
  path = process.env.PATH ?? '',
  timeoutMs = 5000,
}: DetectSandboxOptions = {}): Promise<SandboxAvailability> {
  if (platform === 'linux') {
    const program = findProgram('bwrap', path);
    if (program === undefined)
      return { available: false, reason: 'bubblewrap (bwrap) is not installed: install it (Debian and Ubuntu: apt-get install bubblewrap)' };
    const truePath = existsSync('/bin/true') ? '/bin/true' : '/usr/bin/true';
    const failure = await probe(program, [...bubblewrapBaseArguments({ network: false }), '--', truePath], timeoutMs);
    if (failure !== null) return { available: false, reason: `bubblewrap cannot make a sandbox here (${failure}): user namespaces may be disabled` };
    return { available: true, kind: 'bubblewrap', program };
  }
  if (platform === 'darwin') {
    const program = '/usr/bin/sandbox-exec';
    if (!existsSync(program)) return { available: false, reason: 'sandbox-exec (Seatbelt) is missing' };
    const failure = await probe(program, ['-p', '(version 1)(allow default)', '/usr/bin/true'], timeoutMs);
    if (failure !== null) return { available: false, reason: `sandbox-exec cannot make a sandbox here (${failure})` };
    return { available: true, kind: 'seatbelt', program };
  }
  return { available: false, reason: `cadre has no OS sandbox for ${platform}` };
}

let cached: Promise<SandboxAvailability> | undefined;

/** {@link detectSandbox} with the defaults, probed at the first call and remembered for the life of the process. */
export function detectSandboxOnce(): Promise<SandboxAvailability> {
  cached ??= detectSandbox();
  return cached;
}
