import type { RunBus } from '../runs/run-bus.ts';
import type { SessionRecord, SessionStatus } from '../store/records.ts';
import type { Store } from '../store/store.ts';

/** What a new session is: the rest of its record starts idle, with nothing spent. */
export interface NewSession {
  id: string;
  agent: string;
  model: string;
  created_at: string;
}

/**
 * The one writer of sessions' records (their status above all): every module that makes a primary
 * session or changes one goes through it (the runtime, the session runner, apps' sessions, `cadre
 * run`), and a status change is announced on the bus (`session-status`). A run's child session is
 * made with its run, by the delegation that starts it.
 */
export interface SessionWriter {
  /** Stores a new primary session, idle; rejects when the id is taken. */
  create(session: NewSession): Promise<SessionRecord>;
  /** Moves the session to `status` (with the fields that change with it) and announces it. */
  setStatus(sessionId: string, status: SessionStatus, patch?: Pick<Partial<SessionRecord>, 'user_canceled_at'>): Promise<void>;
  /** Marks a person's stop of the session: turns that started before it do not go on. */
  markStopped(sessionId: string, at: string): Promise<void>;
  /** A person spoke: auto-resume is allowed again. */
  allowAutoResume(sessionId: string): Promise<void>;
  /** Counts one more auto-resumed turn of the session. */
  countAutoResume(session: Pick<SessionRecord, 'id' | 'auto_resumes'>): Promise<void>;
  /** The model the session goes on with. */
  setModel(sessionId: string, model: string): Promise<void>;
}

/** Creates the {@link SessionWriter} on a store; status changes are announced on `bus` when given. */
export function createSessionWriter({ store, bus }: { store: Pick<Store, 'createSession' | 'updateSession'>; bus?: RunBus }): SessionWriter {
  return {
    async create(fields) {
      const session: SessionRecord = { ...fields, status: 'idle', parent_run_id: null, auto_resumes: 0, user_canceled_at: null };
      await store.createSession(session);
      return session;
    },
    async setStatus(sessionId, status, patch = {}) {
      await store.updateSession(sessionId, { status, ...patch });
      bus?.publish({ type: 'session-status', session_id: sessionId, status });
    },
    markStopped(sessionId, at) {
      return store.updateSession(sessionId, { user_canceled_at: at });
    },
    allowAutoResume(sessionId) {
      return store.updateSession(sessionId, { auto_resumes: 0, user_canceled_at: null });
    },
    countAutoResume(session) {
      return store.updateSession(session.id, { auto_resumes: session.auto_resumes + 1 });
    },
    setModel(sessionId, model) {
      return store.updateSession(sessionId, { model });
    },
  };
}
