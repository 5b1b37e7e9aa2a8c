import { realpath, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { ToolInputError } from './tool-input-error.ts';

/**
 * Keeps tools off the store's own files (`Store.files`: a SQLite database and its `-wal`, `-shm`
 * and `-journal`). A process that holds the store must never open them, not even to read: closing
 * any descriptor of a file drops every POSIX lock the process holds on it, SQLite's included, and
 * then other processes take the database for unused, delete its WAL under the owner and stop
 * seeing its writes (SQLite's "How To Corrupt An SQLite Database File", 2.2).
 *
 * A file is the store's when its name in its real folder is one of theirs (compared without
 * regard to case or Unicode normalization, as some file systems compare names) or when it is the
 * same file (device and inode: a symbolic or hard link to one of them).
 */
export interface StoreFileGuard {
  /** Whether there are any files to keep off (a server database has none). */
  readonly active: boolean;
  /** Whether `path` names a store file in its real folder: enough for a walk, which opens nothing. */
  isStoreName(path: string): Promise<boolean>;
  /** Whether `path` is a store file by name or as the same file: checked before anything opens it. */
  isStoreFile(path: string): Promise<boolean>;
  /**
   * Refuses a store file with a tool error that names it as the workspace shows it.
   * @throws {ToolInputError} when `path` is one of the store's files.
   */
  check(path: string, shown: string): Promise<void>;
  /**
   * The guard files a walk yielded still need before they are opened: a walk yields regular
   * files by their own names (never through a symbolic link) and has left out the store's names,
   * so only a hard link can still reach a store file. Undefined when no store file has one, which
   * spares a `stat` per file.
   */
  forWalkedFiles(): Promise<StoreFileGuard | undefined>;
}

/** Compared the way the most lenient file systems compare names (APFS, NTFS: case and normalization). */
function nameKey(path: string): string {
  return path.normalize('NFC').toLowerCase();
}

function realFolder(cache: Map<string, Promise<string>>, folder: string): Promise<string> {
  let real = cache.get(folder);
  if (real === undefined) {
    real = realpath(folder).catch(() => folder);
    cache.set(folder, real);
  }
  return real;
}

/** A tool error for a path that is one of the store's files. */
export function storeFileError(shown: string): ToolInputError {
  return new ToolInputError(
    `'${shown}' is one of cadre's own database files; no tool may open it (opening it would break the database's locks in this process). Read runs with agent_output, or ask the person to use cadre show.`,
  );
}

/**
 * A {@link StoreFileGuard} for the store's `files`. Made per tool call or search: what the files
 * are (their inodes, real folders) is read once, lazily, and kept for the guard's life.
 */
export function createStoreFileGuard(files: readonly string[] = []): StoreFileGuard {
  const absolute = files.map((file) => resolve(file));
  const folders = new Map<string, Promise<string>>();
  let names: Promise<Set<string>> | undefined;
  let identities: Promise<Set<string>> | undefined;

  function storeNames(): Promise<Set<string>> {
    names ??= (async () => {
      const keys = new Set<string>();
      for (const file of absolute) {
        keys.add(nameKey(file));
        keys.add(nameKey(join(await realFolder(folders, dirname(file)), basename(file))));
        // A database reached through a symbolic link keeps its -wal and -shm beside the real file.
        const real = await realpath(file).catch(() => null);
        if (real !== null) keys.add(nameKey(real));
      }
      const database = absolute[0];
      const realDatabase = database === undefined ? null : await realpath(database).catch(() => null);
      if (realDatabase !== null) for (const suffix of ['-wal', '-shm', '-journal']) keys.add(nameKey(realDatabase + suffix));
      return keys;
    })();
    return names;
  }

  let hardLinked = false;
  function storeIdentities(): Promise<Set<string>> {
    identities ??= Promise.all(
      absolute.map((file) =>
        stat(file).then(
          (info) => {
            if (info.nlink > 1) hardLinked = true;
            return `${info.dev}:${info.ino}`;
          },
          () => null,
        ),
      ),
    ).then((found) => new Set(found.filter((identity): identity is string => identity !== null)));
    return identities;
  }

  async function isStoreName(path: string): Promise<boolean> {
    if (absolute.length === 0) return false;
    const keys = await storeNames();
    const full = resolve(path);
    if (keys.has(nameKey(full))) return true;
    return keys.has(nameKey(join(await realFolder(folders, dirname(full)), basename(full))));
  }

  async function isStoreFile(path: string): Promise<boolean> {
    if (absolute.length === 0) return false;
    if (await isStoreName(path)) return true;
    // stat follows symbolic links and opens nothing, so it is safe on the store's files themselves.
    const info = await stat(path).catch(() => null);
    if (info === null) return false;
    return (await storeIdentities()).has(`${info.dev}:${info.ino}`);
  }

  const guard: StoreFileGuard = {
    active: absolute.length > 0,
    isStoreName,
    isStoreFile,
    async check(path, shown) {
      if (await isStoreFile(path)) throw storeFileError(shown);
    },
    async forWalkedFiles() {
      if (absolute.length === 0) return undefined;
      await storeIdentities();
      return hardLinked ? guard : undefined;
    },
  };
  return guard;
}
