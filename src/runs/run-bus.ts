import type { ApprovalRecord, MessageRecord, RunEventRecord, RunRecord, SessionStatus } from '../store/records.ts';
import { reportToDefaultLogger } from '../logging/default-logger.ts';
import type { ActivityEventData } from '../store/run-activity.ts';

/** What happens in a cadre process, for live views (terminal, dashboard, JSON Lines). */
export type CadreEvent =
  | { type: 'run-event'; run: RunRecord; event: RunEventRecord | { type: 'activity'; at: string; data: ActivityEventData } }
  | { type: 'text-delta'; session_id: string; text: string }
  | { type: 'message'; message: MessageRecord }
  | { type: 'session-status'; session_id: string; status: SessionStatus }
  /** An ask for approval was stored, or answered (its `status` says which). */
  | { type: 'approval'; approval: ApprovalRecord };

/** A listener of {@link CadreEvent}s. */
export type CadreListener = (event: CadreEvent) => void;

/** What a listener watches; without it, every event of the process. */
export interface CadreInterest {
  /**
   * A session: the listener gets the events whose session (see {@link sessionOfEvent}) is this
   * one or the child session of a run it saw start under it, at any depth, as the dashboard's
   * view of a session shows them. Events of other sessions never reach it, so what one event
   * costs does not grow with the number of sessions watched.
   */
  sessionId: string;
}

/**
 * The session an event belongs to: a run's events belong to the session that started the run
 * (`run.parent_session_id`); the others name their session.
 */
export function sessionOfEvent(event: CadreEvent): string {
  switch (event.type) {
    case 'run-event':
      return event.run.parent_session_id;
    case 'message':
      return event.message.session_id;
    case 'approval':
      return event.approval.session_id;
    default:
      return event.session_id;
  }
}

/**
 * In-process publish/subscribe of cadre events. Listeners must not throw: one that does is
 * reported and removed rather than breaking the run that published.
 */
export interface RunBus {
  publish(event: CadreEvent): void;
  /** Listens to every event, or to one session's family of events (see {@link CadreInterest}); returns the unsubscribe. */
  subscribe(listener: CadreListener, interest?: CadreInterest): () => void;
  /** Adds a session to a scoped listener's family (a run of the session that started before it subscribed). */
  follow(listener: CadreListener, sessionId: string): void;
  /**
   * Whether an event of session `sessionId` (see {@link sessionOfEvent}) would reach any listener
   * now: when not, a publisher may skip building it (publishing it would do nothing).
   */
  heard(sessionId: string): boolean;
}

/** A scoped listener and the sessions of its family. */
interface Scoped {
  listener: CadreListener;
  sessions: Set<string>;
}

/**
 * Creates a {@link RunBus}. Scoped listeners are indexed by session, so an event reaches only
 * those that watch its session: publishing costs the listeners of every event plus the
 * interested ones, never a pass over all views.
 */
export function createRunBus({ onListenerError = reportToDefaultLogger } = {}): RunBus {
  const everything = new Set<CadreListener>();
  const bySession = new Map<string, Set<Scoped>>();
  const scopedOf = new Map<CadreListener, Scoped>();

  const join = (scoped: Scoped, sessionId: string) => {
    if (scoped.sessions.has(sessionId)) return;
    scoped.sessions.add(sessionId);
    let watchers = bySession.get(sessionId);
    if (!watchers) bySession.set(sessionId, (watchers = new Set()));
    watchers.add(scoped);
  };
  const leave = (scoped: Scoped) => {
    scopedOf.delete(scoped.listener);
    for (const sessionId of scoped.sessions) {
      const watchers = bySession.get(sessionId);
      watchers?.delete(scoped);
      if (watchers?.size === 0) bySession.delete(sessionId);
    }
  };
  const call = (listener: CadreListener, event: CadreEvent, onThrow: () => void) => {
    try {
      listener(event);
    } catch (error) {
      onThrow();
      onListenerError(error);
    }
  };

  return {
    publish(event) {
      for (const listener of everything) call(listener, event, () => everything.delete(listener));
      const watchers = bySession.get(sessionOfEvent(event));
      if (!watchers) return;
      // A copy: a listener may unsubscribe, and a run's child session joins the family below.
      for (const scoped of [...watchers]) {
        if (event.type === 'run-event') join(scoped, event.run.child_session_id);
        call(scoped.listener, event, () => leave(scoped));
      }
    },
    subscribe(listener, interest) {
      if (!interest) {
        everything.add(listener);
        return () => everything.delete(listener);
      }
      const scoped: Scoped = { listener, sessions: new Set() };
      scopedOf.set(listener, scoped);
      join(scoped, interest.sessionId);
      return () => leave(scoped);
    },
    follow(listener, sessionId) {
      const scoped = scopedOf.get(listener);
      if (scoped) join(scoped, sessionId);
    },
    heard: (sessionId) => everything.size > 0 || bySession.has(sessionId),
  };
}
