import { ConfigError } from '../errors/config-error.ts';
import type { SessionRecord } from '../store/records.ts';
import { createSessionWriter } from '../sessions/session-writer.ts';
import type { Store } from '../store/store.ts';
import type { Now } from '../util/clock.ts';

/**
 * The `agent` of a session whose loop is the app's own (`cadre.tools`), not one of cadre's agents.
 * Agent names cannot hold parentheses, so no definition can take it.
 */
export const appLoopAgent = '(app)';

/** Whether a session is driven by the app's own loop: cadre never runs a turn of it. */
export function isAppSession(session: Pick<SessionRecord, 'agent' | 'parent_run_id'>): boolean {
  return session.agent === appLoopAgent && session.parent_run_id === null;
}

/** Longest session id an app may choose. */
const maxSessionIdLength = 256;

/** Options of {@link createAppSessions}. */
export interface AppSessionsOptions {
  store: Store;
  now: Now;
}

/** The sessions of apps' own loops: made on first use with the app's id, then remembered. */
export interface AppSessions {
  /**
   * The app's session with this id, made on first use. Rejects with a {@link ConfigError} for an
   * empty id, or an id that names one of cadre's own sessions (those `cadre.send` drives).
   */
  open(sessionId: string): Promise<SessionRecord>;
  /** Whether the session is an app's (looked up once, then remembered). */
  isApp(sessionId: string): Promise<boolean>;
}

/** Creates the {@link AppSessions} of a runtime. */
export function createAppSessions({ store, now }: AppSessionsOptions): AppSessions {
  const writer = createSessionWriter({ store });
  const opened = new Map<string, Promise<SessionRecord>>();
  const known = new Map<string, boolean>();

  function remember(sessionId: string, app: boolean): boolean {
    if (known.size >= 10_000) known.delete(known.keys().next().value!);
    known.set(sessionId, app);
    return app;
  }

  async function openSession(sessionId: string): Promise<SessionRecord> {
    const existing = await store.getSession(sessionId);
    if (existing) {
      if (!isAppSession(existing)) {
        throw new ConfigError(
          `Session '${sessionId}' is ${existing.parent_run_id === null ? "driven by cadre's own loop (cadre.send)" : `the child session of run ${existing.parent_run_id}`}; give your own loop an id of its own.`,
        );
      }
      return existing;
    }
    try {
      return await writer.create({ id: sessionId, agent: appLoopAgent, model: appLoopAgent, created_at: now() });
    } catch (error) {
      // Another process made it meanwhile.
      const made = await store.getSession(sessionId);
      if (!made || !isAppSession(made)) throw error;
      return made;
    }
  }

  return {
    open(sessionId) {
      if (typeof sessionId !== 'string' || sessionId.trim() === '' || sessionId.length > maxSessionIdLength) {
        return Promise.reject(
          new ConfigError(
            `sessionId must be a non-empty string of at most ${maxSessionIdLength} characters (your chat's id, say); got ${JSON.stringify(sessionId)}.`,
          ),
        );
      }
      let session = opened.get(sessionId);
      if (!session) {
        session = openSession(sessionId);
        opened.set(sessionId, session);
        if (opened.size > 10_000) opened.delete(opened.keys().next().value!);
        session.then(
          () => remember(sessionId, true),
          () => opened.delete(sessionId),
        );
      }
      return session;
    },

    async isApp(sessionId) {
      const cached = known.get(sessionId);
      if (cached !== undefined) return cached;
      const session = await store.getSession(sessionId);
      // An unknown session may still become an app's: not remembered.
      if (!session) return false;
      return remember(sessionId, isAppSession(session));
    },
  };
}
