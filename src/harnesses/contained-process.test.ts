import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { detectContainment, startContained, type Containment } from './contained-process.ts';

function running(pattern: string): number {
  try {
    return execFileSync('pgrep', ['-f', pattern], { encoding: 'utf8' }).trim().split('\n').filter(Boolean).length;
  } catch {
    return 0;
  }
}

const kinds: Containment[] = detectContainment() === 'pid-namespace' ? ['pid-namespace', 'process-tree'] : ['process-tree'];

describe.each(kinds)('a program contained by its %s', (containment) => {
  it.skipIf(process.platform !== 'linux')('ends with everything it started, a shell in a session of its own included', async () => {
    const marker = `sleep 4${Math.floor(Math.random() * 1e6)}`;
    const program = startContained('sh', ['-c', `setsid ${marker} & (${marker} &); echo started; ${marker}`], {
      cwd: '/tmp',
      env: { PATH: process.env.PATH ?? '' },
      containment,
    });
    await new Promise((resolve) => program.child.stdout.once('data', resolve));
    while (running(marker) < 3) await new Promise((resolve) => setTimeout(resolve, 20));
    await program.kill();
    const deadline = Date.now() + 2_000;
    while (running(marker) > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(running(marker)).toBe(0);
    expect((await program.exited).signal).toBe('SIGKILL');
  });

  it('starts in the given folder, with PWD set to it', async () => {
    const program = startContained('sh', ['-c', 'echo "$(pwd) $PWD"'], { cwd: '/tmp', env: { PATH: process.env.PATH ?? '' }, containment });
    let output = '';
    program.child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    expect((await program.exited).code).toBe(0);
    expect(output.trim()).toBe('/tmp /tmp');
  });
});
