import { tool, type Tool, type ToolExecutionOptions, type ToolSet } from 'ai';
import { createDelegationTools } from '../delegation/create-delegation-tools.ts';
import type { DelegationServices } from '../delegation/delegation-services.ts';
import type { RunBus } from '../runs/run-bus.ts';
import { isFinished, type RunRecord, type RunStatus, type Usage } from '../store/records.ts';
import { activityOf } from './activity-of.ts';
import type { AppSessions } from './app-sessions.ts';
import { requireAiSdk7 } from './require-ai-sdk.ts';

/** Options of `cadre.tools`. */
export interface CadreToolsOptions {
  /**
   * The conversation of your loop (your chat's id, say). Runs started by these tools belong to it;
   * it is made in cadre's store on first use, and cadre never runs a turn of it itself.
   */
  sessionId: string;
}

/**
 * What a foreground `agent` call streams as preliminary tool results while its run works, and
 * returns at the end (then with `output`). The model sees only `output` (CONTRACT section 3's text),
 * through the tool's `toModelOutput`; a page on `useChat` shows the whole object on the tool part.
 */
export interface CadreRunProgress {
  /** Null until the run is made. */
  run_id: string | null;
  agent: string;
  description: string | null;
  status: RunStatus | 'starting';
  /** The run's latest activity line. */
  activity: string | null;
  usage: Usage;
  /** The tool's output to the model once the call is over (section 3's shape); null before. */
  output: string | null;
}

/** What the tools need from the runtime. */
export interface AppToolsServices {
  delegation: DelegationServices;
  bus: RunBus;
  sessions: AppSessions;
}

/**
 * cadre's five delegation tools for an app's own AI SDK loop (`generateText`, `streamText`,
 * `ToolLoopAgent`), bound to the app's session. They are the tools cadre's own loop gives its
 * primary agent (the same runs: stored, capped and queued, approvals, stops, exports, recovery);
 * `agent` in the foreground streams its run's progress as preliminary results.
 */
export function createAppTools(services: AppToolsServices, options: CadreToolsOptions): ToolSet {
  requireAiSdk7('cadre.tools');
  const { sessionId } = options;
  const opening = services.sessions.open(sessionId);
  // A bad id fails the tool calls with the same clear error; nobody is left with an unhandled rejection.
  opening.catch(() => {});
  const inner = createDelegationTools(services.delegation, { sessionId, depth: 0, parentRunId: null });
  const opened = (delegate: Tool): Tool => ({
    ...delegate,
    execute: async (input: unknown, execution: ToolExecutionOptions<any>) => {
      await opening;
      return delegate.execute!(input, execution);
    },
  } as Tool);
  return {
    agent: streamingAgentTool(services, sessionId, opening, inner.agent!),
    agent_parallel: opened(inner.agent_parallel!),
    agent_list: opened(inner.agent_list!),
    agent_output: opened(inner.agent_output!),
    agent_stop: opened(inner.agent_stop!),
  };
}

/**
 * The `agent` tool with an async-iterable `execute`: the delegation itself is cadre's own `agent`
 * tool, unchanged; around it, the run this call starts (found by its tool call id) is watched on
 * the bus and each change is yielded as a preliminary result.
 */
function streamingAgentTool(services: AppToolsServices, sessionId: string, opening: Promise<unknown>, delegate: Tool): Tool {
  return tool<unknown, CadreRunProgress, Record<string, never>>({
    description: delegate.description,
    inputSchema: delegate.inputSchema as never,
    execute: (input, execution) => followDelegation(services, sessionId, opening, delegate, input, execution),
    toModelOutput: ({ output }) => ({ type: 'text', value: output.output ?? `status: ${output.status}` }),
  });
}

async function* followDelegation(
  services: AppToolsServices,
  sessionId: string,
  opening: Promise<unknown>,
  delegate: Tool,
  input: unknown,
  execution: ToolExecutionOptions<any>,
): AsyncGenerator<CadreRunProgress> {
  await opening;
  const given = (input ?? {}) as { agent?: unknown; description?: unknown };
  let progress: CadreRunProgress = {
    run_id: null,
    agent: typeof given.agent === 'string' ? given.agent : '',
    description: typeof given.description === 'string' ? given.description : null,
    status: 'starting',
    activity: null,
    usage: { input_tokens: 0, output_tokens: 0 },
    output: null,
  };
  const changes = latestValue<CadreRunProgress>();
  const unsubscribe = services.bus.subscribe((event) => {
    if (event.type !== 'run-event') return;
    const { run } = event;
    if (run.tool_call_id !== execution.toolCallId || run.parent_session_id !== sessionId || run.parent_run_id !== null) return;
    const next = advance(progress, run, activityOf(event));
    // Each preliminary result costs the SDK a copy and the page a render: only what shows counts.
    if (next.run_id === progress.run_id && next.status === progress.status && next.activity === progress.activity && sameUsage(next.usage, progress.usage)) return;
    progress = next;
    changes.push(progress);
  });
  const done = Promise.resolve(delegate.execute!(input, execution) as Promise<string>).then(
    (output) => ({ output }),
    (error: unknown) => ({ error }),
  );
  try {
    yield progress;
    for (;;) {
      const next = await Promise.race([changes.next(), done]);
      if (next === null) continue;
      if ('run_id' in next) {
        yield next;
        continue;
      }
      if ('error' in next) throw next.error;
      const latest = progress.run_id === null ? null : await services.delegation.store.getRun(progress.run_id);
      yield { ...(latest ? advance(progress, latest, latest.last_activity) : progress), output: next.output };
      return;
    }
  } finally {
    unsubscribe();
  }
}

/** The progress after an event of the run: a finished status is never taken back by a late event. */
function advance(progress: CadreRunProgress, run: RunRecord, activity: string | null): CadreRunProgress {
  const settled = progress.status !== 'starting' && isFinished(progress.status);
  return {
    ...progress,
    run_id: run.id,
    agent: run.agent,
    description: run.description,
    status: settled ? progress.status : run.status,
    activity: activity ?? progress.activity ?? run.last_activity,
    usage: run.usage.input_tokens + run.usage.output_tokens >= progress.usage.input_tokens + progress.usage.output_tokens ? run.usage : progress.usage,
  };
}

function sameUsage(a: Usage, b: Usage): boolean {
  return a.input_tokens === b.input_tokens && a.output_tokens === b.output_tokens;
}

/** A one-slot channel: `push` replaces the waiting value; `next` resolves with the newest (null if it was taken). */
function latestValue<T>() {
  let value: T | null = null;
  let wake: (() => void) | null = null;
  return {
    push(next: T) {
      value = next;
      wake?.();
      wake = null;
    },
    async next(): Promise<T | null> {
      if (value === null) await new Promise<void>((resolve) => (wake = resolve));
      const taken = value;
      value = null;
      return taken;
    },
  };
}
