import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { trackProcessGroup } from '../tools/process-groups.ts';

/** How a program's processes are held together so that one stop ends all of them. */
export type Containment = 'pid-namespace' | 'process-tree';

/** A program started by {@link startContained}. */
export interface ContainedProcess {
  readonly child: ChildProcessWithoutNullStreams;
  /** The program's own pid (bubblewrap's, under a pid namespace: killing it ends the namespace). */
  readonly pid: number;
  readonly containment: Containment;
  /** Ends the program and everything it started, detached shells included; resolves once its process exited. */
  kill(): Promise<void>;
  /** Resolves with the exit code (or null after a signal) once the process exited and its output closed. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Options of {@link startContained}. */
export interface StartContainedOptions {
  cwd: string;
  env: Record<string, string>;
  /** @default detected once per process: a pid namespace where bubblewrap makes one, else the process tree */
  containment?: Containment;
}

let detected: Containment | undefined;

/**
 * Whether bubblewrap can make a pid namespace here (it may be installed where user namespaces are
 * off, as in many containers): checked once per process by running `true` in one.
 */
export function detectContainment(): Containment {
  if (detected !== undefined) return detected;
  if (process.platform !== 'linux') return (detected = 'process-tree');
  const probe = spawnSync('bwrap', [...namespaceArguments('/'), '--', 'true'], { stdio: 'ignore', timeout: 5_000 });
  detected = probe.status === 0 ? 'pid-namespace' : 'process-tree';
  return detected;
}

/**
 * bubblewrap options that only make a pid namespace: the file system, devices and network stay as
 * they are (the program's own sandbox and cadre's rules confine it), `/proc` shows the namespace,
 * and the namespace dies with cadre. Its first process is the namespace's init: when it dies, the
 * kernel kills every process inside, those that made themselves a group or session of their own too.
 */
function namespaceArguments(cwd: string): string[] {
  return ['--die-with-parent', '--unshare-pid', '--dev-bind', '/', '/', '--proc', '/proc', '--chdir', cwd];
}

/**
 * Starts a program so that every process it starts can be ended at once: in a pid namespace of
 * its own where bubblewrap makes one (Claude Code starts its shells in process groups of their own,
 * so a group kill would miss them), else in a process group whose whole tree of descendants is
 * killed. stdin, stdout and stderr are pipes. The program is killed if cadre exits.
 */
export function startContained(command: string, args: readonly string[], options: StartContainedOptions): ContainedProcess {
  const containment = options.containment ?? detectContainment();
  const env = { ...options.env, PWD: options.cwd };
  const child =
    containment === 'pid-namespace'
      ? spawn('bwrap', [...namespaceArguments(options.cwd), '--', command, ...args], { cwd: options.cwd, env, stdio: 'pipe', detached: true })
      : spawn(command, [...args], { cwd: options.cwd, env, stdio: 'pipe', detached: true });
  const pid = child.pid ?? -1;
  const untrack = pid > 0 ? trackProcessGroup(pid) : () => {};
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('error', () => resolve({ code: null, signal: null }));
    child.on('close', (code, signal) => resolve({ code, signal }));
  }).finally(untrack);
  let killing: Promise<void> | undefined;
  return {
    child,
    pid,
    containment,
    exited,
    kill() {
      killing ??= (async () => {
        if (pid <= 0) return;
        // Every process of the tree is found before any dies: a shell whose parent died would
        // otherwise be handed to init, out of reach.
        const tree = containment === 'process-tree' ? descendantsOf(pid) : [];
        for (const target of [-pid, pid, ...tree]) {
          try {
            process.kill(target, 'SIGKILL');
          } catch {
            // Gone already.
          }
        }
        await exited;
      })();
      return killing;
    },
  };
}

/** The pids of every descendant of `root`, read from /proc (Linux); none elsewhere. */
function descendantsOf(root: number): number[] {
  const children = new Map<number, number[]>();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so read after the last ')'.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(parent);
      if (list) list.push(Number(entry));
      else children.set(parent, [Number(entry)]);
    } catch {
      // The process ended while we looked.
    }
  }
  const found: number[] = [];
  const pending = [root];
  while (pending.length > 0) {
    for (const child of children.get(pending.pop()!) ?? []) {
      found.push(child);
      pending.push(child);
    }
  }
  return found;
}
