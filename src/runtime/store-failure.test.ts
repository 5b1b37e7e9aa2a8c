import { mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts';
import { StoreFailureError } from '../store/store-failure-error.ts';
import { scriptedLanguageModel } from '../testing/index.ts';
import { createCadre } from './create-cadre.ts';

const folder = mkdtempSync(join(tmpdir(), 'cadre-store-failure-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

/** A session whose background run waits on a slow model, in a runtime on a database file. */
async function busyRuntime(name: string) {
  const path = join(folder, name, 'cadre.db');
  const errors: unknown[] = [];
  let modelCalls = 0;
  const cadre = createCadre({
    store: createSqliteStore({ path }),
    // Short leases: their renewal is the commit that finds the failure while the run waits.
    leaseMs: 300,
    onError: (error) => errors.push(error),
    model: scriptedLanguageModel((request) => {
      modelCalls++;
      if (request.system.includes('general-purpose')) return { text: 'late', delay_ms: 20_000 };
      return request.turn === 0
        ? { tool_calls: [{ name: 'agent', arguments: { agent: 'general', task: 'wait', run_in_background: true } }] }
        : { text: 'started' };
    }),
  });
  const session = await cadre.createSession();
  await cadre.send(session.id, 'go');
  await cadre.store.flush();
  return { cadre, session, path, errors, modelCalls: () => modelCalls };
}

describe('a store that stops taking writes stops the runtime', () => {
  it.each([
    ['deleted', (path: string) => rmSync(path), /^The database .+ was deleted while cadre was using it: cadre stopped/],
    [
      'replaced',
      (path: string) => {
        createSqliteStore({ path: `${path}.other` }).close();
        renameSync(`${path}.other`, path);
      },
      /^The database .+ was replaced by another file while cadre was using it: cadre stopped/,
    ],
  ])('database %s: waitForIdle rejects within a second with the failure, reported once, and the run stops', async (_name, fault, message) => {
    const { cadre, session, path, errors, modelCalls } = await busyRuntime(_name);
    const waiting = cadre.waitForIdle(session.id);
    fault(path);
    const faultedAt = Date.now();
    const failure = await waiting.then(
      () => null,
      (error: unknown) => error,
    );
    expect(Date.now() - faultedAt).toBeLessThan(1_000);
    expect(StoreFailureError.isInstance(failure)).toBe(true);
    expect((failure as StoreFailureError).kind).toBe('replaced');
    expect((failure as StoreFailureError).message).toMatch(message);
    expect(errors).toEqual([failure]);
    await expect(cadre.send(session.id, 'more')).rejects.toBe(failure);
    const calls = modelCalls();
    await cadre.close();
    await cadre.store.close().catch(() => {});
    expect(modelCalls()).toBe(calls);
    expect(errors).toHaveLength(1);
  });

  it('names the kind of a failure from SQLite result codes, and says what to do', () => {
    const full = new StoreFailureError(Object.assign(new Error('database or disk is full'), { errcode: 13 }), '/x/cadre.db');
    expect(full.kind).toBe('disk-full');
    expect(full.message).toBe(
      'The disk holding the database /x/cadre.db is full (database or disk is full): cadre stopped the work of its runs, since nothing more could be stored; what was stored before is kept. Free some space, then continue the session: its unfinished runs are recovered.',
    );
    expect(new StoreFailureError(Object.assign(new Error('attempt to write a readonly database'), { errcode: 8 | (6 << 8) }), '/x').kind).toBe('read-only');
    expect(new StoreFailureError(Object.assign(new Error('database disk image is malformed'), { errcode: 11 }), '/x').message).toContain(
      'Restore it from a backup',
    );
    expect(new StoreFailureError(Object.assign(new Error('disk I/O error'), { errcode: 10 | (3 << 8) }), '/x').kind).toBe('io');
  });
});
