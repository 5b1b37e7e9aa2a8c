import type { MessageRecord, RunRecord } from '../../src/store/records.ts';
import type { Store } from '../../src/store/store.ts';

/** A small seeded random number generator (mulberry32): the same seed, the same chaos. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

/** What the chaos left behind in one parent session, by the invariants of crash survival. */
export interface ChaosReport {
  runs: number;
  /** Background runs that owe their parent exactly one notification. */
  eligible: number;
  /** Eligible runs announced exactly once, with `notification.delivered_at` set. */
  delivered: number;
  /** Eligible runs never announced in the parent's transcript. */
  lost: number;
  /** Eligible runs announced more than once. */
  duplicated: number;
  /** Every broken invariant, in words. */
  violations: string[];
}

/** The run ids a message announces, if it is a notification. */
export function announcedRuns(message: MessageRecord): string[] {
  if (message.role !== 'user' || typeof message.content !== 'string' || !message.content.startsWith('<subagent-notification>')) return [];
  return [...message.content.matchAll(/^run_id: (\S+)$/gm)].map((match) => match[1]);
}

/** Whether a run owes its parent a notification (docs/runs-and-limits.md). */
function isEligible(run: RunRecord): boolean {
  return run.mode === 'background' && run.status !== 'canceled_by_parent' && run.notification?.suppressed !== true;
}

function checkSequence(what: string, seqs: number[], violations: string[]): void {
  const gap = seqs.findIndex((seq, index) => seq !== index + 1);
  if (gap !== -1) violations.push(`${what}: seq ${seqs.join(',')} has a gap or a repeat at position ${gap + 1}`);
}

/** Every tool call of an assistant message has a tool result in the same session. */
function checkToolPairs(sessionId: string, messages: MessageRecord[], violations: string[]): void {
  const calls = new Set<string>();
  const results = new Set<string>();
  for (const message of messages) {
    if (!Array.isArray(message.content)) continue;
    for (const part of message.content as Array<{ type?: string; toolCallId?: string }>) {
      if (part.type === 'tool-call' && part.toolCallId) calls.add(part.toolCallId);
      if (part.type === 'tool-result' && part.toolCallId) results.add(part.toolCallId);
    }
  }
  for (const call of calls) if (!results.has(call)) violations.push(`session ${sessionId}: tool call ${call} has no tool result`);
}

/**
 * Checks a parent session once it is idle after a recovery: no run queued or running, each
 * eligible background run announced exactly once (counted in the parent's stored messages) with
 * `notification.delivered_at` set, no other run announced, message and event seqs without gaps,
 * and no tool call without its result, in the parent's and every child session.
 */
export async function checkChaos(store: Store, sessionId: string): Promise<ChaosReport> {
  const violations: string[] = [];
  const runs = await store.listRuns({ parent_session_id: sessionId, order: 'oldest' });
  const messages = await store.listMessages(sessionId);
  const announced = new Map<string, number>();
  for (const message of messages) for (const runId of announcedRuns(message)) announced.set(runId, (announced.get(runId) ?? 0) + 1);
  const report: ChaosReport = { runs: runs.length, eligible: 0, delivered: 0, lost: 0, duplicated: 0, violations };
  checkSequence(
    `session ${sessionId} messages`,
    messages.map((message) => message.seq),
    violations,
  );
  checkToolPairs(sessionId, messages, violations);
  for (const run of runs) {
    const count = announced.get(run.id) ?? 0;
    if (run.status === 'queued' || run.status === 'running') violations.push(`run ${run.id} is still ${run.status} while its session is idle`);
    if (isEligible(run)) {
      report.eligible++;
      if (count === 0) violations.push(`run ${run.id} (${run.status}) was never announced (notification ${JSON.stringify(run.notification)})`);
      if (count > 1) violations.push(`run ${run.id} was announced ${count} times`);
      if (count === 1 && !run.notification?.delivered_at) violations.push(`run ${run.id} was announced but its notification.delivered_at is not set`);
      if (count === 0) report.lost++;
      else if (count > 1) report.duplicated++;
      else report.delivered++;
    } else if (count > 0) {
      violations.push(`run ${run.id} (${run.mode}, ${run.status}) was announced ${count} times but owes no notification`);
    }
    checkSequence(
      `run ${run.id} events`,
      (await store.listRunEvents(run.id)).map((event) => event.seq),
      violations,
    );
    const childMessages = await store.listMessages(run.child_session_id);
    checkSequence(
      `session ${run.child_session_id} messages`,
      childMessages.map((message) => message.seq),
      violations,
    );
    checkToolPairs(run.child_session_id, childMessages, violations);
  }
  return report;
}
