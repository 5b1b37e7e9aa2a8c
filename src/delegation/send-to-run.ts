import { NotFoundError } from '../errors/not-found-error.ts';
import { EmptyRunMessageError, messageText } from '../runs/run-inbox.ts';
import type { RunMessage, RunMessageSender, RunMode, RunRecord } from '../store/records.ts';
import { isFinished } from '../store/records.ts';
import { ToolInputError } from '../tools/define-tool.ts';
import type { DelegationScope, DelegationServices } from './delegation-services.ts';
import { noSuchRun } from './run-views.ts';
import { startDelegation } from './start-delegation.ts';

/** A message for a run, from its parent's model (`agent_send`) or a person (CLI, API, dashboard, library). */
export interface SendToRunRequest {
  runId: string;
  message: string;
  from: RunMessageSender;
  /** Abort the model call and tool calls under way first. @default false */
  interrupt?: boolean;
  /** How a follow-up run starts, when the run has finished. @default 'background' */
  mode?: RunMode;
  /** The tool call that sent it (a follow-up run records it). @default null */
  toolCallId?: string | null;
}

/**
 * What a message did: joined a queued run's task, waits for a running run (`reachable` says whether
 * the process that runs it could be told now), or started a follow-up run on the child session of
 * a finished one. `run` is the run the message went to.
 */
export type SendToRunResult =
  | { kind: 'queued'; run: RunRecord; message: RunMessage }
  | { kind: 'running'; run: RunRecord; message: RunMessage; reachable: boolean }
  | { kind: 'follow-up'; run: RunRecord; followed: RunRecord };

/**
 * Sends a message to a run (docs/talking-to-runs.md). With `scope`, only a run of that session is
 * found (another session's run gets the same answer as an unknown one); without it (a person), any
 * run. The message goes to the active run of the run's child session, which has at most one: the
 * run itself, or the follow-up already started from it. With none active, a follow-up run starts.
 * Bad input changes nothing.
 */
export async function sendToRun(services: DelegationServices, scope: DelegationScope | null, request: SendToRunRequest): Promise<SendToRunResult> {
  if (request.message.trim() === '') throw new EmptyRunMessageError();
  const named = await services.store.getRun(request.runId);
  if (!named && scope === null) throw new NotFoundError('run', request.runId);
  if (!named || (scope !== null && named.parent_session_id !== scope.sessionId)) throw new ToolInputError(noSuchRun(request.runId));
  for (let attempt = 0; attempt < 5; attempt++) {
    const latest = await latestRunOfChild(services, named);
    const receipt = await services.sendRunMessage({ runId: latest.id, text: request.message, from: request.from, interrupt: request.interrupt });
    if (receipt.kind !== 'finished') return receipt;
    const followUp = await startFollowUp(services, receipt.run, request);
    if (followUp) return { kind: 'follow-up', run: followUp, followed: receipt.run };
  }
  throw new Error(`The child session of run ${named.id} kept changing; the message was not sent. Send it again.`);
}

/** The newest run of a run's child session: the active one if there is one (a child session has at most one). */
async function latestRunOfChild(services: DelegationServices, run: RunRecord): Promise<RunRecord> {
  const siblings = await services.store.listRuns({ parent_session_id: run.parent_session_id });
  const ofChild = siblings.filter((each) => each.child_session_id === run.child_session_id);
  return ofChild.find((each) => !isFinished(each.status)) ?? ofChild[0] ?? run;
}

/** Follow-ups being started in this process, by child session: two messages at once start one. */
const starting = new Map<string, Promise<RunRecord | null>>();

/**
 * Starts the follow-up run of a finished run, as `agent` with `resume` does: the same child
 * session and agent, the message as its next user message (a person's marked), `resumed_from` set.
 * What else a follow-up keeps of the run it follows is added here. Null when another follow-up of
 * the child session started meanwhile (the message then goes to that one).
 */
export async function startFollowUp(services: DelegationServices, earlier: RunRecord, request: SendToRunRequest): Promise<RunRecord | null> {
  const key = earlier.child_session_id;
  const under = starting.get(key);
  if (under) {
    await under.catch(() => null);
    return null;
  }
  const start = (async () => {
    // The parent that delegated it, whoever sends the message: the follow-up is its run too.
    const scope: DelegationScope = { sessionId: earlier.parent_session_id, depth: earlier.depth - 1, parentRunId: earlier.parent_run_id };
    return startDelegation(services, scope, {
      agent: earlier.agent,
      task: messageText({ from: request.from, text: request.message.trim() }),
      description: earlier.description,
      resume: earlier.id,
      mode: request.mode ?? 'background',
      toolCallId: request.toolCallId ?? null,
    });
  })();
  starting.set(key, start);
  try {
    return await start;
  } finally {
    starting.delete(key);
  }
}
