import { mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import type { SandboxMode } from '../../config/sandbox-config.ts';
import { ConfigError } from '../../errors/config-error.ts';
import { bubblewrapArguments } from './bubblewrap-arguments.ts';
import { detectSandboxOnce, type SandboxAvailability, type SandboxKind } from './detect-sandbox.ts';
import type { SandboxPolicy } from './sandbox-policy.ts';
import { SandboxUnavailableError } from './sandbox-unavailable-error.ts';
import { seatbeltProfile } from './seatbelt-profile.ts';

/** Options of {@link createSandbox}. */
export interface SandboxOptions {
  /** The workspace root: commands start there and may write there. */
  root: string;
  /** @default 'auto' */
  mode?: SandboxMode;
  /** Whether commands reach the network. @default false */
  network?: boolean;
  /** Further places commands may write (absolute, or relative to `root`). @default [] */
  writable?: readonly string[];
  /**
   * cadre's database, `:memory:` or a URL: the file and its `-wal`, `-shm` and `-journal` stay
   * read-only inside the box, and so does the folder holding them unless it is the workspace
   * itself (a command could otherwise create a `-journal` next to it). @default `<root>/.cadre/cadre.db`
   */
  db?: string;
  /**
   * More files or folders that stay read-only inside the box (configuration files), besides
   * `<root>/.cadre`, `<root>/cadre.config.json`, the agent folders of `.claude` and `.opencode`,
   * and `.git/hooks` and `.git/config` (which git would run outside the box). @default []
   */
  readOnly?: readonly string[];
  /** Finds the OS sandbox. @default the probe of this process, run once */
  detect?: () => Promise<SandboxAvailability>;
  /** Folders commands see read-only wherever they are (a worktree's repository under `/tmp`). @default none */
  readable?: readonly string[];
}

/** What the box of a runtime is, for `cadre agents`, the dashboard and the start of `cadre run`. */
export interface SandboxStatus {
  mode: SandboxMode;
  /** The OS sandbox commands run in, or `none` (mode `off`, or none available). */
  kind: SandboxKind | 'none';
  /** Whether commands run confined. */
  confined: boolean;
  network: boolean;
  /** Where commands may write: the workspace, `writable`, and a private temp folder. */
  writable: string[];
  /** Why commands are not confined; absent when they are. */
  reason?: string;
}

/** A program and its arguments, ready for `spawn`. */
export interface CommandLaunch {
  file: string;
  args: string[];
  env: NodeJS.ProcessEnv;
}

/** The OS sandbox of a runtime: one policy for every command of every agent. */
export interface Sandbox {
  readonly mode: SandboxMode;
  /** What confines commands; probes the OS sandbox the first time. */
  status(): Promise<SandboxStatus>;
  /** Throws a {@link SandboxUnavailableError} when the mode is `required` and there is no sandbox. */
  check(): Promise<void>;
  /**
   * `command` wrapped in the box; unchanged when the mode is `off`, or `auto` without a sandbox.
   * @throws {SandboxUnavailableError} when the mode is `required` and there is no sandbox.
   */
  launch(command: CommandLaunch): Promise<CommandLaunch>;
  /**
   * The same box for commands of a run that works elsewhere (its own git worktree): they start and
   * write in `root` instead of the workspace, and in `writable` (the worktree's git folders), and
   * see `readable`; the configured `sandbox.writable` places stay writable.
   */
  at?(root: string, place: { writable?: readonly string[]; readable?: readonly string[] }): Sandbox;
}

/** The files of a database: itself, `-wal`, `-shm` and `-journal`; none for `:memory:` and URLs. */
function databaseFiles(db: string): string[] {
  if (!isAbsolute(db)) return [];
  return [db, `${db}-wal`, `${db}-shm`, `${db}-journal`];
}

function isInside(path: string, place: string): boolean {
  const fromPlace = relative(place, path);
  return fromPlace === '' || (!fromPlace.startsWith('..') && !isAbsolute(fromPlace));
}

/** The real path of `path`, or undefined when it does not exist. */
function realOrNothing(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

/**
 * The OS sandbox for `bash` (docs/tools-and-approvals.md): bubblewrap on Linux, Seatbelt on macOS. Inside
 * the box commands write only in the workspace, `writable` and a private temp folder; cadre's
 * database, configuration and agent files stay read-only even inside the workspace, so a command
 * cannot widen its own permissions; and there is no network unless `network`. Whether the OS
 * sandbox works is probed by running a command in it, once per process.
 * @throws {ConfigError} for a `network` that is not true or false (a list of hosts needs a filtering proxy cadre does not have).
 * @example createSandbox({ root: process.cwd(), network: false })
 */
export function createSandbox(options: SandboxOptions): Sandbox {
  const { mode = 'auto', network = false, detect = detectSandboxOnce } = options;
  if (typeof network !== 'boolean') {
    throw new ConfigError(
      'sandbox network: a list of hosts needs a filtering proxy, which cadre does not have on this platform: only true or false is supported',
    );
  }
  const root = resolve(options.root);
  const writable = (options.writable ?? []).map((path) => resolve(root, path));
  const db = options.db ?? join(root, '.cadre', 'cadre.db');
  const storeFolder = isAbsolute(db) ? dirname(db) : undefined;
  const protectedPaths = [
    join(root, '.cadre'),
    join(root, 'cadre.config.json'),
    join(root, '.claude', 'agents'),
    join(root, '.opencode', 'agent'),
    join(root, '.opencode', 'agents'),
    join(root, '.git', 'hooks'),
    join(root, '.git', 'config'),
    ...databaseFiles(db),
    // The folder of the database, unless that would make the workspace (or a writable place) read-only.
    ...(storeFolder !== undefined && ![root, ...writable].some((place) => isInside(place, storeFolder)) ? [storeFolder] : []),
    ...(options.readOnly ?? []).map((path) => resolve(root, path)),
  ];
  let temp: string | undefined;

  /** The policy as the file system is now: real paths, missing ones left out. */
  function policy(): SandboxPolicy {
    const realRoot = realOrNothing(root) ?? root;
    const places = [realRoot, ...writable.map(realOrNothing).filter((path) => path !== undefined)];
    const readOnly = protectedPaths.map(realOrNothing).filter((path) => path !== undefined && places.some((place) => isInside(path, place)));
    const readable = (options.readable ?? []).map(realOrNothing).filter((path) => path !== undefined);
    return { root: realRoot, writable: places.slice(1), readOnly: [...new Set(readOnly as string[])], network, ...(readable.length > 0 ? { readable } : {}) };
  }

  async function availability(): Promise<SandboxAvailability | undefined> {
    return mode === 'off' ? undefined : detect();
  }

  return {
    mode,
    at(placeRoot, place) {
      return createSandbox({
        ...options,
        root: placeRoot,
        db,
        readOnly: (options.readOnly ?? []).map((path) => resolve(root, path)),
        writable: [...writable, ...(place.writable ?? [])],
        readable: [...(options.readable ?? []), ...(place.readable ?? [])],
      });
    },
    async status() {
      const found = await availability();
      const confined = found?.available === true;
      return {
        mode,
        kind: found?.available ? found.kind : 'none',
        confined,
        network: confined ? network : true,
        writable: confined
          ? [root, ...writable, found.kind === 'bubblewrap' ? '/tmp (private to each command)' : 'a private temp folder (TMPDIR)']
          : ['anywhere the user can'],
        ...(confined ? {} : { reason: found === undefined ? 'sandbox.mode is off' : found.reason }),
      };
    },
    async check() {
      const found = await availability();
      if (mode === 'required' && found?.available !== true) throw new SandboxUnavailableError(found?.available === false ? found.reason : 'no sandbox');
    },
    async launch(command) {
      const found = await availability();
      if (found === undefined) return command;
      if (!found.available) {
        if (mode === 'required') throw new SandboxUnavailableError(found.reason);
        return command;
      }
      const box = policy();
      if (found.kind === 'bubblewrap') {
        return { file: found.program, args: [...bubblewrapArguments(box), '--', command.file, ...command.args], env: { ...command.env, TMPDIR: '/tmp' } };
      }
      temp ??= realpathSync(mkdtempSync(join(tmpdir(), 'cadre-sandbox-')));
      return { file: found.program, args: ['-p', seatbeltProfile(box, temp), command.file, ...command.args], env: { ...command.env, TMPDIR: temp } };
    },
  };
}
