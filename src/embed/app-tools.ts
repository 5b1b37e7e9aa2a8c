import type { Tool, ToolSet } from 'ai';
import { createDelegationTools } from '../delegation/create-delegation-tools.ts';
import { composeTools, type ToolMiddleware } from '../loop/tool-pipeline.ts';
import { checkToolInput } from '../tools/check-tool-input.ts';
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
 * returns at the end (then with `output`). The model sees only `output` (docs/runs-and-limits.md text),
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
 * primary agent (the same runs: stored, capped and queued, approvals, stops, exports, recovery),
 * through the one tool pipeline: the input check, then, for `agent`, its run followed as
 * preliminary results, then the app's session made on first use.
 */
export function createAppTools(services: AppToolsServices, options: CadreToolsOptions): ToolSet {
  requireAiSdk7('cadre.tools');
  const { sessionId } = options;
  const opening = services.sessions.open(sessionId);
  // A bad id fails the tool calls with the same clear error; nobody is left with an unhandled rejection.
  opening.catch(() => {});
  const delegation = createDelegationTools(services.delegation, { sessionId, depth: 0, parentRunId: null });
  // followRun before openSession: the SDK streams an iterable only when execute returns it as is.
  const tools = composeTools(delegation, [checkToolInput, followRun(services, sessionId), openSession(opening)]);
  // The model sees section 3's text only; the app's page sees the whole progress on the tool part.
  tools.agent = {
    ...tools.agent!,
    toModelOutput: ({ output }: { output: unknown }) => ({ type: 'text', value: modelText(output as CadreRunProgress) }),
  } as Tool;
  return tools;
}

/** The pipeline entry that waits for the app's session to exist (or refuses with why it cannot). */
function openSession(opening: Promise<unknown>): ToolMiddleware {
  return { name: 'open-app-session', handle: (_call, next) => opening.then(() => next()) };
}

/**
 * The pipeline entry of `agent`: the delegation itself is cadre's own `agent` tool, unchanged;
 * around it, the run this call starts (found by its tool call id) is watched on the bus and each
 * change is yielded as a preliminary result, the last one with the tool's output.
 */
function followRun(services: AppToolsServices, sessionId: string): ToolMiddleware {
  return {
    name: 'follow-run',
    appliesTo: ({ name }) => name === 'agent',
    handle: (call, next) => followDelegation(services, sessionId, call.input, call.toolCallId, next),
  };
}

function modelText(progress: CadreRunProgress): string {
  return progress.output ?? `status: ${progress.status}`;
}

async function* followDelegation(
  services: AppToolsServices,
  sessionId: string,
  input: unknown,
  toolCallId: string,
  next: () => unknown,
): AsyncGenerator<CadreRunProgress> {
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
  const unsubscribe = services.bus.subscribe(
    (event) => {
      if (event.type !== 'run-event') return;
      const { run } = event;
      if (run.tool_call_id !== toolCallId || run.parent_session_id !== sessionId || run.parent_run_id !== null) return;
      const changed = advance(progress, run, activityOf(event));
      // Each preliminary result costs the SDK a copy and the page a render: only what shows counts.
      if (
        changed.run_id === progress.run_id &&
        changed.status === progress.status &&
        changed.activity === progress.activity &&
        sameUsage(changed.usage, progress.usage)
      )
        return;
      progress = changed;
      changes.push(progress);
    },
    { sessionId },
  );
  const done = Promise.resolve()
    .then(() => next() as Promise<string>)
    .then(
      (output) => ({ output }),
      (error: unknown) => ({ error }),
    );
  try {
    yield progress;
    for (;;) {
      const step = await Promise.race([changes.next(), done]);
      if (step === null) continue;
      if ('run_id' in step) {
        yield step;
        continue;
      }
      if ('error' in step) throw step.error;
      const latest = progress.run_id === null ? null : await services.delegation.store.getRun(progress.run_id);
      yield { ...(latest ? advance(progress, latest, latest.last_activity) : progress), output: step.output };
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
