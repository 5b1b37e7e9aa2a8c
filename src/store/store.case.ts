import { afterEach, beforeEach, describe } from 'vitest';
import type { Store } from './store.ts';
import { approvalCases } from './store-approvals.case.ts';
import { commitCases } from './store-commit.case.ts';
import { notificationCases } from './store-notifications.case.ts';
import { activityCases } from './store-activity.case.ts';
import { runCases } from './store-runs.case.ts';
import { sessionCases } from './store-sessions.case.ts';
import { workflowCases } from './store-workflows.case.ts';
import { answerCases } from './store-answers.case.ts';

/** Extra abilities of an engine that some cases need. */
export interface StoreCaseOptions {
  /** Closes `store` and opens the same database again, to prove writes are durable. */
  reopen?: (store: Store) => Promise<Store>;
  /** Writes `text` into run `runId`'s stored activity as a build before typed activity did (raw SQL). */
  writeTextActivity?: (store: Store, runId: string, text: string) => Promise<void>;
  /** The `content` column of a stored (flushed) message as the engine keeps it (raw SQL). */
  storedContent?: (store: Store, sessionId: string, seq: number) => Promise<string>;
}

/** What each group of cases gets: the store of the current test, and the engine's abilities. */
export interface StoreCaseContext {
  store: () => Store;
  /** Replaces the current store with a reopened one; skipped engines return null. */
  reopen: (() => Promise<Store>) | null;
  /** Stores a text-only activity line as an older build did; null where the engine cannot. */
  writeTextActivity: ((runId: string, text: string) => Promise<void>) | null;
  /** The stored `content` column of a flushed message; null where the engine cannot tell. */
  storedContent: ((sessionId: string, seq: number) => Promise<string>) | null;
}

/**
 * The behaviour every `Store` engine must have, run against each engine
 * (`runStoreCases('sqlite in memory', async () => createSqliteStore({ path: ':memory:' }))`).
 */
export function runStoreCases(name: string, makeStore: () => Promise<Store>, options: StoreCaseOptions = {}): void {
  describe(name, () => {
    let current: Store | null = null;

    beforeEach(async () => {
      current = await makeStore();
    });

    afterEach(async () => {
      await current?.close();
      current = null;
    });

    const context: StoreCaseContext = {
      store() {
        if (!current) throw new Error('No store: cases run only inside a test.');
        return current;
      },
      reopen: options.reopen
        ? async () => {
            const reopen = options.reopen!;
            current = await reopen(context.store());
            return current;
          }
        : null,
      writeTextActivity: options.writeTextActivity ? (runId, text) => options.writeTextActivity!(context.store(), runId, text) : null,
      storedContent: options.storedContent ? (sessionId, seq) => options.storedContent!(context.store(), sessionId, seq) : null,
    };

    sessionCases(context);
    runCases(context);
    activityCases(context);
    commitCases(context);
    approvalCases(context);
    notificationCases(context);
    workflowCases(context);
    answerCases(context);
  });
}
