import type { Coordination, RunOutputEvent } from '../../coordination/coordination.ts';
import type { CadreEvent, CadreListener, RunBus } from '../../runs/run-bus.ts';
import type { RunRecord } from '../../store/records.ts';
import { systemNowMs, type NowMs } from '../../util/clock.ts';
import type { RunJobData } from './run-job.ts';

/** Options of {@link createWorkerRelay}. */
export interface WorkerRelayOptions {
  coordination: Coordination;
  /** Milliseconds output waits to travel with what follows it. @default 50 */
  flushMs?: number;
  /** Characters of streamed text after which the output travels at once. @default 16000 */
  maxBatchChars?: number;
  /** How long a host counts as watched after its job said so, before it repeats it. @default 6000 */
  watchedMs?: number;
  /** The clock in epoch milliseconds (until when a host counts as watched). @default systemNowMs */
  nowMs?: NowMs;
}

/** A job whose output is relayed: the host it goes to, and the sessions of its runs. */
interface FollowedJob {
  host: string;
  sessions: Set<string>;
}

/** A runtime of a worker, as the relay sees it. */
export interface RelayedRuntime {
  /** Its bus: its runs' live events are relayed as they happen. */
  bus: RunBus;
  /** Its `subscribe`: subscribing makes the runtime stream (someone watches), and hears its output. */
  watch(listener: CadreListener): () => void;
}

/** What a worker relays to the hosts whose runs it carries out; see {@link createWorkerRelay}. */
export interface WorkerRelay {
  /** Relays the live events of a runtime's runs from now on; returns the function that stops. */
  attach(runtime: RelayedRuntime): () => void;
  /**
   * Relays the output of a run that a job carries out (and of the runs it starts here) to the host
   * that sent the job, while that host is watched; returns the function to call when the job ends.
   */
  follow(run: RunRecord, job: Pick<RunJobData, 'host' | 'watched'>): () => void;
  close(): void;
}

/**
 * The worker's half of live views of runs on workers. Run events (`live-event`) always go to the
 * hosts, as they happen. Output (streamed text and stored messages), which is many times more, goes
 * only to hosts someone watches (`views-watched`, repeated by the host while it is watched, and
 * the `watched` of a job when it starts), batched (`run-output`, at most one per `flushMs` per
 * host, text deltas of one session joined) and sent ahead of the next run event, so a host sees
 * it in the order it happened. While no host of this worker is watched, its runtimes have no
 * watcher, so their runs do not stream at all (as a process nobody watches).
 */
export function createWorkerRelay({
  coordination,
  flushMs = 50,
  maxBatchChars = 16_000,
  watchedMs = 6_000,
  nowMs = systemNowMs,
}: WorkerRelayOptions): WorkerRelay {
  /** The followed job each session's output belongs to: the child sessions of its run and of the runs that run starts. */
  const jobOfSession = new Map<string, FollowedJob>();
  /** Hosts served now: how many jobs of each, their watch, and until when someone watches them. */
  const hosts = new Map<string, { jobs: number; off: () => void; watchedUntil: number }>();
  const runtimes = new Set<{ watch: RelayedRuntime['watch']; off?: () => void }>();
  const pending = new Map<string, { events: RunOutputEvent[]; chars: number; timer: NodeJS.Timeout }>();
  let expiry: NodeJS.Timeout | undefined;

  const watched = (host: string) => (hosts.get(host)?.watchedUntil ?? 0) > nowMs();

  /** Gives each runtime a watcher while some host is watched, and none otherwise. */
  function update(): void {
    clearTimeout(expiry);
    const at = nowMs();
    const ends = [...hosts.values()].map((host) => host.watchedUntil).filter((until) => until > at);
    for (const runtime of runtimes) {
      if (ends.length > 0) runtime.off ??= runtime.watch(relayOutput);
      else if (runtime.off) {
        runtime.off();
        runtime.off = undefined;
      }
    }
    if (ends.length > 0) {
      expiry = setTimeout(update, Math.min(...ends) - at + 1);
      expiry.unref();
    }
  }

  function relayOutput(event: CadreEvent): void {
    let output: RunOutputEvent;
    let sessionId: string;
    if (event.type === 'text-delta') [output, sessionId] = [event, event.session_id];
    else if (event.type === 'message') [output, sessionId] = [event, event.message.session_id];
    else return;
    const host = jobOfSession.get(sessionId)?.host;
    if (host === undefined || !watched(host)) return;
    let batch = pending.get(host);
    if (!batch) {
      const timer = setTimeout(() => flush(host), flushMs);
      timer.unref();
      pending.set(host, (batch = { events: [], chars: 0, timer }));
    }
    const last = batch.events.at(-1);
    if (output.type === 'text-delta' && last?.type === 'text-delta' && last.session_id === output.session_id) {
      batch.events[batch.events.length - 1] = { ...last, text: last.text + output.text };
    } else batch.events.push(output);
    if (output.type === 'text-delta') batch.chars += output.text.length;
    if (batch.chars >= maxBatchChars) flush(host);
  }

  function flush(host: string): void {
    const batch = pending.get(host);
    if (!batch) return;
    clearTimeout(batch.timer);
    pending.delete(host);
    coordination.publish({ type: 'run-output', host, events: batch.events });
  }

  function relayRunEvent(event: CadreEvent): void {
    if (event.type !== 'run-event') return;
    const { run } = event;
    // A run started by a followed run: its output goes to the same host.
    const job = jobOfSession.get(run.child_session_id) ?? jobOfSession.get(run.parent_session_id);
    if (job) {
      if (!job.sessions.has(run.child_session_id)) {
        job.sessions.add(run.child_session_id);
        jobOfSession.set(run.child_session_id, job);
      }
      flush(job.host);
    }
    coordination.publish({ type: 'live-event', parent_session_id: run.parent_session_id, run, event: event.event });
  }

  return {
    attach({ bus, watch }) {
      const runtime: { watch: RelayedRuntime['watch']; off?: () => void } = { watch };
      runtimes.add(runtime);
      const offEvents = bus.subscribe(relayRunEvent);
      update();
      return () => {
        offEvents();
        runtime.off?.();
        runtimes.delete(runtime);
      };
    },

    follow(run, { host, watched: watchedNow }) {
      if (host === undefined) return () => {};
      let served = hosts.get(host);
      if (!served) {
        const entry = { jobs: 0, watchedUntil: 0, off: () => {} };
        entry.off = coordination.subscribe('views-watched', host, (signal) => {
          entry.watchedUntil = signal.for_ms > 0 ? nowMs() + signal.for_ms : 0;
          update();
        });
        hosts.set(host, (served = entry));
      }
      served.jobs++;
      const job: FollowedJob = { host, sessions: new Set([run.child_session_id]) };
      jobOfSession.set(run.child_session_id, job);
      // Told with the job, so the run streams from its first step when someone watches.
      if (watchedNow) served.watchedUntil = Math.max(served.watchedUntil, nowMs() + watchedMs);
      update();
      const entry = served;
      let followed = true;
      return () => {
        if (!followed) return;
        followed = false;
        flush(host);
        for (const sessionId of job.sessions) if (jobOfSession.get(sessionId) === job) jobOfSession.delete(sessionId);
        if (--entry.jobs > 0) return;
        entry.off();
        hosts.delete(host);
        update();
      };
    },

    close() {
      for (const host of [...pending.keys()]) flush(host);
      for (const entry of hosts.values()) entry.off();
      hosts.clear();
      jobOfSession.clear();
      update();
    },
  };
}
