import { CadreError } from '../errors/cadre-error.ts';

/**
 * Why a store stopped taking writes: its disk is full, it became read-only, it is damaged, the
 * file was deleted or replaced under the process, or another error of the file system.
 */
export type StoreFailureKind = 'disk-full' | 'read-only' | 'damaged' | 'replaced' | 'io';

/** SQLite's primary result codes that name a kind (extended codes keep them in the low byte). */
const kindsByCode: Record<number, StoreFailureKind> = { 8: 'read-only', 10: 'io', 11: 'damaged', 13: 'disk-full', 26: 'damaged' };

/** A database file deleted or replaced (another device or inode at its path) while the store uses it. */
export class DatabaseReplacedError extends CadreError {
  readonly path: string;
  /** Deleted (nothing at the path), rather than replaced by another file. */
  readonly gone: boolean;
  constructor(path: string, gone: boolean) {
    super('CadreDatabaseReplacedError', `the database file ${path} was ${gone ? 'deleted' : 'replaced by another file'} while cadre was using it`);
    this.path = path;
    this.gone = gone;
  }

  static override isInstance(error: unknown): error is DatabaseReplacedError {
    return CadreError.isInstance(error) && error.name === 'CadreDatabaseReplacedError';
  }
}

function kindOf(cause: unknown): StoreFailureKind {
  if (DatabaseReplacedError.isInstance(cause)) return 'replaced';
  const code = (cause as { errcode?: number; code?: string } | null)?.errcode;
  if (typeof code === 'number' && kindsByCode[code & 0xff] !== undefined) return kindsByCode[code & 0xff];
  if ((cause as { code?: string } | null)?.code === 'ENOSPC') return 'disk-full';
  return 'io';
}

function describe(kind: StoreFailureKind, where: string, reason: string, cause: unknown): string {
  const stopped = 'cadre stopped the work of its runs, since nothing more could be stored; what was stored before is kept';
  switch (kind) {
    case 'disk-full':
      return `The disk holding the database ${where} is full (${reason}): ${stopped}. Free some space, then continue the session: its unfinished runs are recovered.`;
    case 'read-only':
      return `The database ${where} became read-only (${reason}): ${stopped}. Make it writable again, then continue the session: its unfinished runs are recovered.`;
    case 'damaged':
      return `The database ${where} is damaged (${reason}): ${stopped}. Restore it from a backup, or move it aside (with its -wal and -shm files) to start a new one.`;
    case 'replaced':
      return DatabaseReplacedError.isInstance(cause) && cause.gone
        ? `The database ${where} was deleted while cadre was using it: cadre stopped, since nothing more it wrote would be kept. The session and its runs went with the file.`
        : `The database ${where} was replaced by another file while cadre was using it: cadre stopped, since nothing more it wrote would be kept. The session and its runs are not in the file now at that path.`;
    case 'io':
      return `The store could not commit (${reason}); the writes since the previous commit were lost, and it takes no more writes: ${stopped}. Check the disk of ${where}, then continue the session: its unfinished runs are recovered.`;
  }
}

/**
 * A store that stopped taking writes for good: every later write and `flush()` rejects with this
 * error, and the runtime stops its runs' work when it sees it (see `Store.onFailure`). The
 * message says what happened and what to do; `kind` says it for code.
 */
export class StoreFailureError extends CadreError {
  readonly kind: StoreFailureKind;
  /** The database, for a store that is a file. */
  readonly path: string | undefined;

  constructor(cause: unknown, path?: string) {
    const kind = kindOf(cause);
    const reason = cause instanceof Error ? cause.message : String(cause);
    super('CadreStoreFailureError', describe(kind, path ?? '(the store)', reason, cause), { cause });
    this.kind = kind;
    this.path = path;
  }

  static override isInstance(error: unknown): error is StoreFailureError {
    return CadreError.isInstance(error) && error.name === 'CadreStoreFailureError';
  }
}
