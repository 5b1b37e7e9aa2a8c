import { CadreError } from '../errors/cadre-error.ts';

/** What went wrong with a run's worktree. */
export type WorktreeErrorKind = 'not_a_repository' | 'no_commit' | 'conflict' | 'unmerged' | 'not_found' | 'busy' | 'git';

/**
 * A worktree operation that could not be done (docs/worktrees.md): the workspace is no git
 * repository, a merge would conflict (`files` names them), a removal would lose unmerged changes.
 * Nothing was changed when it is thrown.
 */
export class WorktreeError extends CadreError {
  readonly kind: WorktreeErrorKind;
  /** The files a merge would conflict on; empty otherwise. */
  readonly files: readonly string[];

  constructor(kind: WorktreeErrorKind, message: string, options: { files?: readonly string[]; cause?: unknown } = {}) {
    super('CadreWorktreeError', message, { cause: options.cause });
    this.kind = kind;
    this.files = options.files ?? [];
  }

  static override isInstance(error: unknown): error is WorktreeError {
    return CadreError.isInstance(error) && error.name === 'CadreWorktreeError';
  }

  /** The AI SDK shows a tool error to the model as `toString()`: only the message. */
  override toString(): string {
    return this.message;
  }
}
