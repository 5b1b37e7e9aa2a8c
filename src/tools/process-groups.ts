import { onExit } from 'signal-exit';

const live = new Set<number>();
let removeExitHook: (() => void) | undefined;

function killAll(): void {
  for (const pid of live) killProcessGroup(pid, 'SIGKILL');
}

/** Sends `signal` to every process of the group `pid` leads; a group already gone is fine. */
export function killProcessGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: nothing left to kill.
  }
}

/** Whether any process of the group `pid` leads is still there (zombies included). */
export function processGroupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Remembers a process group a tool started, so that it is killed when cadre exits: by
 * `process.exit` (a second Ctrl-C), an uncaught error, or a signal nobody else handles (SIGTERM,
 * SIGHUP, SIGINT outside `cadre run`), through signal-exit. The exit hook is in place only while
 * some group is alive.
 * @returns a function to call once the group is gone.
 */
export function trackProcessGroup(pid: number): () => void {
  live.add(pid);
  removeExitHook ??= onExit(() => {
    killAll();
  });
  return () => {
    live.delete(pid);
    if (live.size === 0 && removeExitHook) {
      removeExitHook();
      removeExitHook = undefined;
    }
  };
}
