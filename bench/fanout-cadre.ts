import { join } from 'node:path';
import type { LanguageModel } from 'ai';
import { createCadre } from '../src/runtime/create-cadre.ts';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../src/store/store.ts';
import { createErrorSink, fanOutRound, noopTool, workerAgent } from './bench-tools.ts';
import { createMemoryStore } from './memory-store.ts';

/** Rows one round left in the database. */
export interface StoredRows {
  runs: number;
  messages: number;
  events: number;
}

/** cadre set up for the fan-out benchmark. */
export interface CadreFanOut {
  /** The database file. */
  path: string;
  /** The limits raised so every run of a round is active at once. */
  limits: { maxActivePerParent: number; maxQueuedPerParent: number; maxActiveGlobal: number };
  /** One round: a new session, the user's message, and the wait until it and its runs are idle. */
  round(): Promise<string>;
  /** Counts what a round stored, read through a second connection (so only committed rows count). */
  storedRows(sessionId: string): Promise<StoredRows>;
  close(): Promise<void>;
}

/**
 * cadre on a file-backed SQLite store (WAL) in `folder` (or, with `storage: 'memory'`, on maps that
 * keep nothing), with the `worker` agent and the `noop` tool, and limits high enough that all
 * `fanOut` runs of a round run at once.
 */
export function createCadreFanOut({
  model,
  folder,
  fanOut,
  storage = 'sqlite',
}: {
  model: LanguageModel;
  folder: string;
  fanOut: number;
  storage?: 'sqlite' | 'memory';
}): CadreFanOut {
  const path = join(folder, 'cadre.db');
  const errors = createErrorSink();
  const limits = { maxActivePerParent: Math.max(5, fanOut), maxQueuedPerParent: Math.max(50, fanOut), maxActiveGlobal: Math.max(64, fanOut) };
  const cadre = createCadre({
    store: storage === 'memory' ? createMemoryStore() : createSqliteStore({ path }),
    model,
    agents: [workerAgent],
    tools: { noop: noopTool },
    limits,
    onError: errors.report,
  });
  let reader: Store | undefined;

  return {
    path,
    limits,

    round: () => fanOutRound(cadre, errors, 'fan-out'),

    async storedRows(sessionId) {
      await cadre.store.flush();
      reader ??= createSqliteStore({ path });
      const runs = await reader.listRuns({ parent_session_id: sessionId });
      let messages = (await reader.listMessages(sessionId)).length;
      let events = 0;
      for (const run of runs) {
        if (run.status !== 'completed') throw new Error(`Run ${run.id} ended ${run.status}: ${run.error?.message ?? ''}`);
        messages += (await reader.listMessages(run.child_session_id)).length;
        events += (await reader.listRunEvents(run.id)).length;
      }
      return { runs: runs.length, messages, events };
    },

    async close() {
      await cadre.close();
      await cadre.store.close();
      await reader?.close();
    },
  };
}
