import { CadreError } from '../../errors/index.ts';

/**
 * Why a sandboxed workflow script ended without a value:
 * - `syntax`: the script does not parse;
 * - `threw`: it threw (or rejected) and did not catch it;
 * - `cpu`: it used more interpreter time than it may (an endless loop);
 * - `memory`: it allocated more than it may;
 * - `stack`: it recursed too deep;
 * - `stalled`: it waits on a promise nothing will settle (no run of it is going);
 * - `not_json`: it returned a value that is not JSON (a function, a cycle, a BigInt);
 * - `interpreter`: the interpreter itself failed.
 */
export type WorkflowScriptErrorKind = 'syntax' | 'threw' | 'cpu' | 'memory' | 'stack' | 'stalled' | 'not_json' | 'interpreter';

/** A failure as data, as it crosses from the sandbox worker. */
export interface ScriptFailure {
  kind: WorkflowScriptErrorKind;
  message: string;
}

const name = 'WorkflowScriptError';

/** A model-written workflow script failed in its sandbox; the message is short and says what to fix. */
export class WorkflowScriptError extends CadreError {
  readonly kind: WorkflowScriptErrorKind;

  constructor(kind: WorkflowScriptErrorKind, message: string, options: { cause?: unknown } = {}) {
    super(name, message, options);
    this.kind = kind;
  }

  /** Whether `error` is a {@link WorkflowScriptError}, even from another copy of the package. */
  static isInstance(error: unknown): error is WorkflowScriptError {
    return CadreError.isInstance(error) && error.name === name;
  }
}

const boundMessages: Partial<Record<WorkflowScriptErrorKind, string>> = {
  cpu: 'The script used up its interpreter time (an endless loop?) and was stopped.',
  memory: 'The script ran out of memory and was stopped.',
  stack: 'The script recursed too deep and was stopped.',
};

function kindOf(errorName: string, message: string): WorkflowScriptErrorKind {
  if (errorName === 'SyntaxError') return 'syntax';
  if (errorName === 'InternalError' && message === 'out of memory') return 'memory';
  if (errorName === 'InternalError' && message === 'stack overflow') return 'stack';
  if (errorName === 'InternalError' && message === 'interrupted') return 'cpu';
  if (errorName === 'TypeError' && message.startsWith('the value returned is not JSON')) return 'not_json';
  return 'threw';
}

const firstLine = (text: string) => text.split('\n')[0].slice(0, 400);

/** What a script that ended by throwing `errorName: message` (as the prelude described it) is told. */
export function thrownFailure(errorName: string, message: string): ScriptFailure {
  const kind = kindOf(errorName, message);
  const shown = errorName === 'thrown value' ? `The script threw a value that is not an Error: ${message}` : `The script threw ${errorName}: ${message}`;
  return { kind, message: boundMessages[kind] ?? firstLine(shown) };
}

/** What a script is told whose interpreter could not go on after `errorName: message`. */
export function fatalFailure(errorName: string, message: string): ScriptFailure {
  const kind = kindOf(errorName, message);
  return { kind, message: boundMessages[kind] ?? firstLine(`The script failed: ${errorName}: ${message}`) };
}

/** The bound message of `kind` (memory, cpu), for failures the host itself notices. */
export function boundFailure(kind: 'cpu' | 'memory'): ScriptFailure {
  return { kind, message: boundMessages[kind] as string };
}
