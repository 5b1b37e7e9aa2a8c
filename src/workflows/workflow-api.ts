/**
 * The `w` object a workflow script receives (CONTRACT section 22), and the shape of a script.
 * The engine (`run-workflow.ts`) implements it; the sandboxed `workflow` tool builds against it.
 */

/** Options of one {@link WorkflowApi.agent} call: those of the `agent` tool a workflow may pass. */
export interface WorkflowAgentOptions {
  /** Label for lists and cards (≤ 80 chars); default: the start of the task. */
  description?: string;
  /** Extra context placed before the task under its heading. */
  context?: string;
  /** A JSON Schema: the call resolves to the run's structured value instead of its text. */
  output_schema?: Record<string, unknown>;
  /** Where the run works, as the `agent` tool's `isolation` (for example `worktree`). */
  isolation?: string;
  /** The run's turn cap. */
  max_turns?: number;
}

/** A thunk for {@link WorkflowApi.parallel}: starts one branch when called. */
export type WorkflowThunk<T = unknown> = () => Promise<T> | T;

/** One stage of {@link WorkflowApi.pipeline}: takes the previous stage's value and the item's index. */
export type WorkflowStage = (value: any, index: number) => Promise<unknown> | unknown;

/** What a workflow script has: runs, their combinations, phases and a log. */
export interface WorkflowApi {
  /**
   * Starts a run of `agent` with `task` and resolves to its result: the text, or the value when
   * `output_schema` is given. A run that does not complete rejects with a {@link WorkflowRunError}.
   */
  agent(agent: string, task: string, options?: WorkflowAgentOptions): Promise<any>;
  /** Calls every thunk at once (each in its own key path) and resolves to their values in order. */
  parallel<T = unknown>(thunks: ReadonlyArray<WorkflowThunk<T>>): Promise<T[]>;
  /**
   * Passes each item through the stages in turn; the stages of different items overlap. Resolves
   * to the last stage's value of each item, in the items' order.
   */
  pipeline(items: ReadonlyArray<unknown>, ...stages: WorkflowStage[]): Promise<unknown[]>;
  /** Names the phase the workflow enters (shown in lists, the dashboard and the live view). */
  phase(name: string): void;
  /** Appends a line to the workflow's log. */
  log(text: string): void;
}

/** A workflow script: an async function of `w` and the input, returning the output (JSON). */
export type WorkflowScript = (w: WorkflowApi, input: any) => Promise<unknown> | unknown;

/** Where a workflow's script came from; kept on the record so a replay finds it again. */
export type WorkflowSource =
  /** A file's text (an ES module with a default export), with its path. */
  | { kind: 'file'; path: string; text: string }
  /** A name a library process registered with `cadre.workflow(name, fn)`. */
  | { kind: 'registered'; name: string }
  /** A script a model wrote for the `workflow` tool (run in the sandbox). */
  | { kind: 'script'; text: string };

/** Options of running a workflow through the engine. */
export interface RunWorkflowOptions {
  /** Where the script came from (stored with the workflow). */
  source: WorkflowSource;
  /** The workflow's name: default the file's base name, the registered name, or `script`. */
  name?: string;
  /** The session its runs belong to; default a new session of the `main` agent. */
  sessionId?: string;
  /** The run that started it (a model's `workflow` tool call), if any: its runs are that run's children. */
  parentRunId?: string | null;
  /** Depth of the caller: its runs are at `depth + 1`. @default 0 */
  depth?: number;
  /** Most runs the workflow may start; the next `w.agent` call rejects. @default unbounded */
  maxRuns?: number;
  /** Stops the workflow (its runs end canceled_by_user). */
  signal?: AbortSignal;
  /**
   * Only store it, for another process to run (`cadre workflow resume`, as `cadre workflow run
   * --background` does): `done` resolves at once with status `running`.
   */
  background?: boolean;
}

/** A workflow's states. */
export type WorkflowStatus = 'running' | 'completed' | 'failed' | 'canceled_by_user' | 'abandoned';

/** One run of a workflow as its end reports it. */
export interface WorkflowRunLine {
  run_id: string;
  /** The call's durable key (its path and number on it), e.g. `p0.1/s1#0`. */
  key: string;
  agent: string;
  status: string;
}

/** How a workflow ended. */
export interface WorkflowOutcome {
  id: string;
  status: WorkflowStatus;
  /** The script's return value (JSON), when completed. */
  output: unknown;
  error: { kind: string; message: string } | null;
  runs: WorkflowRunLine[];
}

/** A workflow under way in this process. */
export interface StartedWorkflow {
  id: string;
  /** Settles when the workflow ends (never rejects: a failed workflow resolves with its error). */
  done: Promise<WorkflowOutcome>;
  /** Stops it and its runs (`canceled_by_user`). */
  stop(reason?: string): Promise<void>;
}

/**
 * The engine that runs workflows: given a script function, its input and options, it makes the
 * workflow record, runs the script with a durable `w`, and ends the record. Created by the
 * runtime (`createCadre`) and handed to whatever starts workflows (the library, the CLI, the
 * model's `workflow` tool).
 */
export interface WorkflowEngine {
  run(script: WorkflowScript, input: unknown, options: RunWorkflowOptions): Promise<StartedWorkflow>;
}
