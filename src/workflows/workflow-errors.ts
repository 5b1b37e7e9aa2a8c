import { CadreError } from '../errors/cadre-error.ts';

/**
 * What `w.agent` rejects with when its run does not complete: the run's id, its status and its
 * error (CONTRACT section 22). A script may catch it and go on.
 */
export class WorkflowRunError extends CadreError {
  readonly runId: string;
  readonly status: string;
  readonly error: { kind: string; message: string } | null;
  /** The call's durable key. */
  readonly key: string;

  constructor(fields: { runId: string; status: string; error: { kind: string; message: string } | null; key: string; agent: string }) {
    const reason = fields.error ? `: ${fields.error.kind}: ${fields.error.message}` : '';
    super('CadreWorkflowRunError', `Run ${fields.runId} (${fields.agent}, call ${fields.key}) ended ${fields.status}${reason}`);
    this.runId = fields.runId;
    this.status = fields.status;
    this.error = fields.error;
    this.key = fields.key;
  }

  static override isInstance(error: unknown): error is WorkflowRunError {
    return CadreError.isInstance(error) && error.name === 'CadreWorkflowRunError';
  }
}

/**
 * A replay that does not repeat the calls of the first execution: another call, or other inputs,
 * at a key. The workflow fails with it, whatever the script does with it.
 */
export class WorkflowDivergenceError extends CadreError {
  /** The first call that differs. */
  readonly key: string;

  constructor(key: string, detail: string) {
    super('CadreWorkflowDivergenceError', `The replay diverged at call ${key}: ${detail} A workflow must make the same calls in the same order for the same results.`);
    this.key = key;
  }

  static override isInstance(error: unknown): error is WorkflowDivergenceError {
    return CadreError.isInstance(error) && error.name === 'CadreWorkflowDivergenceError';
  }
}

/** What the script's pending calls reject with once the workflow is stopped or has ended. */
export class WorkflowStoppedError extends CadreError {
  constructor(message: string) {
    super('CadreWorkflowStoppedError', message);
  }

  static override isInstance(error: unknown): error is WorkflowStoppedError {
    return CadreError.isInstance(error) && error.name === 'CadreWorkflowStoppedError';
  }
}

/** A `w.agent` call beyond the runs a workflow may start (`maxRuns`, `limits.maxWorkflowRuns` for a model's). */
export class WorkflowRunLimitError extends CadreError {
  readonly maxRuns: number;

  constructor(maxRuns: number) {
    super('CadreWorkflowRunLimitError', `This workflow may start at most ${maxRuns} runs; it called w.agent once more.`);
    this.maxRuns = maxRuns;
  }

  static override isInstance(error: unknown): error is WorkflowRunLimitError {
    return CadreError.isInstance(error) && error.name === 'CadreWorkflowRunLimitError';
  }
}
