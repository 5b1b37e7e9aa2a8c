/** Who stopped a run: a person, or its parent (model or parent run). */
export type StopCause = 'user' | 'parent';

/**
 * The abort reason cadre uses, so code that sees an aborted signal can tell a person's stop from
 * a parent's without parsing messages.
 */
export class RunStopSignal extends Error {
  readonly cause: StopCause;

  constructor(cause: StopCause, reason?: string) {
    super(reason ?? (cause === 'user' ? 'Stopped by a person' : 'Stopped by the parent'));
    this.name = 'RunStopSignal';
    this.cause = cause;
  }

  /** The cause carried by an aborted signal; a bare abort counts as a person's stop. */
  static causeOf(signal: AbortSignal): StopCause {
    const reason: unknown = signal.reason;
    if (reason instanceof RunStopSignal) return reason.cause;
    if (typeof reason === 'object' && reason !== null && (reason as { name?: string }).name === 'RunStopSignal') {
      return (reason as { cause: StopCause }).cause;
    }
    return 'user';
  }
}

/** The status a stopped run ends in. */
export function stoppedStatus(cause: StopCause): 'canceled_by_user' | 'canceled_by_parent' {
  return cause === 'user' ? 'canceled_by_user' : 'canceled_by_parent';
}

/**
 * The abort reason of a run this process lets go of because it shuts down: the run is not
 * stopped; it goes on where it executes (a worker) or is resumed by the next process.
 */
export class RunDetachSignal extends Error {
  constructor() {
    super('cadre is shutting down');
    this.name = 'RunDetachSignal';
  }

  /** Whether an abort reason is a {@link RunDetachSignal} (also from another copy of cadre). */
  static isInstance(reason: unknown): boolean {
    return typeof reason === 'object' && reason !== null && (reason as { name?: string }).name === 'RunDetachSignal';
  }
}

/**
 * The abort reason of the work under way in a run when a message with `interrupt` arrives: the
 * model call and tool calls stop, the run does not; it goes on with the message.
 */
export class RunInterruptSignal extends Error {
  constructor() {
    super('Interrupted by a new message to the run');
    this.name = 'RunInterruptSignal';
  }

  /** Whether an abort reason is a {@link RunInterruptSignal} (also from another copy of cadre). */
  static isInstance(reason: unknown): boolean {
    return typeof reason === 'object' && reason !== null && (reason as { name?: string }).name === 'RunInterruptSignal';
  }
}
