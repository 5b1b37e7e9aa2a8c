import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { HarnessRecord } from '../store/records.ts';

/**
 * Ends the program a dead cadre process left running for a run, when it runs on this host: its
 * process (bubblewrap, whose pid namespace ends with it, or the leader of its process group) is
 * killed with its group, once /proc shows the pid still runs that program (a reused pid is left
 * alone). Resolves once it is gone, or after 2 s. Returns whether one was found.
 */
export async function endLeftProgram(harness: HarnessRecord, programPath: string): Promise<boolean> {
  const pid = harness.pid;
  if (pid === null || pid === undefined || pid <= 0 || harness.host !== hostname()) return false;
  let commandLine: string;
  try {
    commandLine = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return false;
  }
  if (!commandLine.includes(programPath)) return false;
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
  for (let waited = 0; waited < 2_000; waited += 50) {
    try {
      process.kill(pid, 0);
    } catch {
      return true;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}
