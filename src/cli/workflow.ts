import { spawn } from 'node:child_process';
import { ConfigError } from '../errors/config-error.ts';
import type { CadreWorkflow } from '../runtime/cadre.ts';
import type { WorkflowRecord } from '../store/records.ts';
import type { Store } from '../store/store.ts';
import type { WorkflowOutcome } from '../workflows/workflow-api.ts';
import { workflowView, type WorkflowView } from '../workflows/workflow-view.ts';
import { colorEnabled, liveViewEnabled, writeLine, type CliContext, type OutputStream } from './cli-context.ts';
import type { RuntimeFlags, StoreFlags } from './command-options.ts';
import { createJsonView } from './json-view.ts';
import { openCliStore, openRuntime } from './open-runtime.ts';
import { createPlainView } from './plain-view.ts';
import { quietConsole } from './quiet-console.ts';
import type { RunView } from './run-view.ts';
import { workflowLines } from './workflow-lines.ts';

/** Options of `cadre workflow run`. */
export interface WorkflowRunFlags extends RuntimeFlags {
  /** `--input JSON`. */
  input?: string;
  /** `--background`: store it and let a process of its own run it. */
  background?: boolean;
  yes?: boolean;
  /** `--approvals wait|deny`: what an ask of its runs does (`--yes` approves them all). */
  approvals?: string;
}

const exitCodes: Record<string, number> = { completed: 0, failed: 1, canceled_by_user: 130, abandoned: 1, running: 0 };

function parseInput(text: string | undefined): unknown {
  if (text === undefined) return null;
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`--input must be JSON: ${(error as Error).message}`);
  }
}

/** A stream that passes writes on until `mute()`: the views end with `cadre run`'s hints, which a workflow replaces with its own. */
function mutable(stream: OutputStream): OutputStream & { mute(): void } {
  let muted = false;
  return Object.assign(Object.create(stream) as OutputStream, {
    write: (chunk: string) => (muted ? true : stream.write(chunk)),
    mute: () => {
      muted = true;
    },
  });
}

async function chooseView(
  context: CliContext,
  sessionId: string,
  json: boolean,
  stderr: OutputStream,
  agentColorOf: (name: string) => unknown,
): Promise<RunView> {
  if (json) return createJsonView({ stdout: context.stdout, stderr });
  if (liveViewEnabled(context)) {
    const { createLiveView } = await import('./live-view.ts');
    return createLiveView({
      stdout: context.stdout,
      stderr,
      sessionId,
      color: colorEnabled(context),
      prompting: () => false,
      agentColor: agentColorOf as never,
    });
  }
  return createPlainView({ stdout: context.stdout, stderr, sessionId, answerHint: false });
}

/** The global flags a background process repeats to open the same database, model and agents. */
function repeatedFlags(flags: WorkflowRunFlags): string[] {
  const args: string[] = [];
  for (const [flag, value] of [
    ['--db', flags.db],
    ['--config', flags.config],
    ['--model', flags.model],
    ['--base-url', flags.baseUrl],
    ['--log-level', flags.logLevel],
  ] as const)
    if (value !== undefined) args.push(flag, value);
  for (const dir of flags.agents ?? []) args.push('--agents', dir);
  for (const rule of flags.allow ?? []) args.push('--allow', rule);
  for (const rule of flags.deny ?? []) args.push('--deny', rule);
  if (flags.trust) args.push('--trust');
  if (flags.yes) args.push('--yes');
  if (flags.approvals !== undefined) args.push('--approvals', flags.approvals);
  return args;
}

/**
 * Follows a workflow of this process to its end: its runs on the session's live view, its phases
 * and log lines as notices, Ctrl-C (or `cadre stop` from anywhere) stops it. The exit code: 0
 * completed, 1 failed, 130 stopped by a person.
 */
async function follow(
  context: CliContext,
  flags: WorkflowRunFlags,
  runtime: Awaited<ReturnType<typeof openRuntime>>,
  begin: () => Promise<CadreWorkflow>,
  sessionId: () => Promise<string>,
): Promise<number> {
  const { cadre } = runtime;
  const stderr = mutable(context.stderr);
  let view: RunView | undefined;
  const buffered: Parameters<RunView['event']>[0][] = [];
  const unsubscribe = cadre.subscribe((event) => (view ? view.event(event) : buffered.push(event)));
  let seenPhases = 0;
  let seenLog = 0;
  let workflowId: string | undefined;
  const offWorkflows = cadre.subscribeWorkflows((workflow) => {
    if (workflow.id !== workflowId || !view) return;
    for (const phase of workflow.phases.slice(seenPhases)) view.notice(`phase: ${phase.name}`);
    seenPhases = Math.max(seenPhases, workflow.phases.length);
    for (const line of workflow.log.slice(seenLog))
      if (flags.json) writeLine(context.stdout, JSON.stringify({ type: 'workflow-log', workflow_id: workflow.id, at: line.at, text: line.text }));
    seenLog = Math.max(seenLog, workflow.log.length);
  });
  let stopping = false;
  const onInterrupt = () => {
    if (stopping) process.exit(130);
    stopping = true;
    view?.notice('Stopping the workflow and its runs... (press Ctrl-C again to quit at once)');
    if (workflowId) void cadre.stopWorkflow(workflowId).catch(() => {});
  };
  process.on('SIGINT', onInterrupt);
  try {
    const started = await begin();
    workflowId = started.id;
    view = await chooseView(context, await sessionId(), flags.json === true, stderr, (name) => runtime.agents.get(name)?.color ?? null);
    for (const event of buffered.splice(0)) view.event(event);
    if (!flags.json) writeLine(context.stderr, `Workflow ${started.id} (cadre stop ${started.id} stops it)`);
    else writeLine(context.stdout, JSON.stringify({ type: 'workflow-start', workflow_id: started.id }));
    if (stopping) void cadre.stopWorkflow(started.id).catch(() => {});
    const outcome = await started.done;
    await runtime.store.flush();
    finishView(context, flags, view, stderr, outcome, await started.get());
    return exitCodes[outcome.status] ?? 1;
  } finally {
    process.off('SIGINT', onInterrupt);
    offWorkflows();
    unsubscribe();
  }
}

function finishView(
  context: CliContext,
  flags: WorkflowRunFlags,
  view: RunView,
  stderr: ReturnType<typeof mutable>,
  outcome: WorkflowOutcome,
  record: WorkflowRecord,
): void {
  if (flags.json) {
    writeLine(
      context.stdout,
      JSON.stringify({
        type: 'workflow-end',
        workflow_id: outcome.id,
        status: outcome.status,
        output: outcome.output,
        error: outcome.error,
        runs: outcome.runs,
      }),
    );
    return;
  }
  stderr.mute();
  view.finish({
    sessionId: record.session_id,
    status: outcome.status === 'completed' ? 'completed' : outcome.status === 'canceled_by_user' ? 'canceled' : 'failed',
    text: '',
  });
  const done = outcome.runs.filter((run) => run.status === 'completed' || run.status === 'completed_empty').length;
  writeLine(context.stderr, `Workflow ${outcome.id} ${outcome.status}: ${done} of ${outcome.runs.length} runs completed.`);
  if (outcome.error)
    writeLine(
      context.stderr,
      `cadre: the workflow ${outcome.status === 'canceled_by_user' ? 'was stopped' : 'failed'}: ${outcome.error.kind}: ${outcome.error.message}`,
    );
  if (outcome.status === 'completed') writeLine(context.stdout, typeof outcome.output === 'string' ? outcome.output : JSON.stringify(outcome.output, null, 2));
}

/** `cadre workflow run FILE [--input JSON] [--background]`. */
export async function workflowRunCommand(context: CliContext, file: string, flags: WorkflowRunFlags): Promise<number> {
  const input = parseInput(flags.input);
  const runtime = await openRuntime({ context, flags, requireModel: true, approvals: workflowApprovals(flags) });
  const restoreConsole = quietConsole(flags.debug === true);
  try {
    if (flags.background) {
      const started = await runtime.cadre.startWorkflow(file, input, { background: true });
      const child = spawn(process.execPath, [...process.execArgv, process.argv[1], 'workflow', 'resume', started.id, ...repeatedFlags(flags)], {
        cwd: context.cwd,
        env: context.env as NodeJS.ProcessEnv,
        detached: true,
        stdio: 'ignore',
      });
      child.unref();
      if (flags.json) writeLine(context.stdout, JSON.stringify({ type: 'workflow-start', workflow_id: started.id, background: true }));
      else writeLine(context.stdout, started.id);
      return 0;
    }
    let started: CadreWorkflow | undefined;
    return await follow(
      context,
      flags,
      runtime,
      async () => (started = await runtime.cadre.startWorkflow(file, input)),
      async () => (await started!.get()).session_id,
    );
  } finally {
    await runtime.close();
    restoreConsole();
  }
}

/** `cadre workflow resume WF_ID`: replays a workflow whose process died, and follows it as `workflow run` does. */
export async function workflowResumeCommand(context: CliContext, workflowId: string, flags: WorkflowRunFlags): Promise<number> {
  const runtime = await openRuntime({ context, flags, requireModel: true, approvals: workflowApprovals(flags) });
  const restoreConsole = quietConsole(flags.debug === true);
  try {
    const record = await runtime.store.getWorkflow(workflowId);
    if (!record) throw new ConfigError(`No workflow '${workflowId}'. List them with: cadre workflows`);
    return await follow(
      context,
      flags,
      runtime,
      () => runtime.cadre.resumeWorkflow(workflowId),
      async () => record.session_id,
    );
  } finally {
    await runtime.close();
    restoreConsole();
  }
}

async function views(store: Store, workflows: WorkflowRecord[]): Promise<WorkflowView[]> {
  return Promise.all(workflows.map((workflow) => workflowView(store, workflow)));
}

/** `cadre workflows [--json]`: the latest workflows, newest first. */
export async function workflowsCommand(context: CliContext, flags: StoreFlags & { limit?: string }): Promise<number> {
  const limit = flags.limit === undefined ? 20 : Number(flags.limit);
  if (!Number.isInteger(limit) || limit < 1) throw new ConfigError('--limit must be a whole number of 1 or more.');
  const { store, close } = await openCliStore(context, flags);
  try {
    const list = await views(store, await store.listWorkflows({ limit }));
    if (flags.json) {
      writeLine(context.stdout, JSON.stringify(list, null, 2));
      return 0;
    }
    if (list.length === 0) writeLine(context.stdout, '(no workflows)');
    for (const workflow of list) {
      const done = workflow.runs.filter((run) => run.status === 'completed' || run.status === 'completed_empty').length;
      const phase = workflow.phases.at(-1)?.name ?? '-';
      writeLine(
        context.stdout,
        `${workflow.id}  ${workflow.name}  ${workflow.status}  phase: ${phase}  runs: ${done}/${workflow.runs.length}  ${workflow.created_at}`,
      );
    }
    return 0;
  } finally {
    await close();
  }
}

/** `cadre workflow show WF_ID [--json]`: one workflow with its phases, log, runs and result. */
export async function workflowShowCommand(context: CliContext, workflowId: string, flags: StoreFlags): Promise<number> {
  const { store, close } = await openCliStore(context, flags);
  try {
    const record = await store.getWorkflow(workflowId);
    if (!record) throw new ConfigError(`No workflow '${workflowId}'. List them with: cadre workflows`);
    const view = await workflowView(store, record);
    if (flags.json) writeLine(context.stdout, JSON.stringify(view, null, 2));
    else for (const line of workflowLines(view)) writeLine(context.stdout, line);
    return 0;
  } finally {
    await close();
  }
}

/**
 * What an ask of a workflow's runs does: `--yes` approves, `--approvals wait` waits for an answer
 * from anywhere (`cadre approve`, the dashboard), and otherwise it is denied at once.
 * @throws {ConfigError} for another mode, or `--yes` with `--approvals`.
 */
export function workflowApprovals(flags: Pick<WorkflowRunFlags, 'yes' | 'approvals'>): 'yes' | 'wait' | 'deny' {
  if (flags.approvals !== undefined && flags.approvals !== 'wait' && flags.approvals !== 'deny')
    throw new ConfigError(`--approvals of a workflow must be wait or deny, not '${flags.approvals}' (its live view does not prompt).`);
  if (flags.yes && flags.approvals !== undefined) throw new ConfigError('--yes approves every ask; leave out --approvals, or leave out --yes.');
  return flags.yes ? 'yes' : ((flags.approvals ?? 'deny') as 'wait' | 'deny');
}
