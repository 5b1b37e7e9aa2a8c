import type pg from 'pg';
import { isFinished, type NewRunEvent, type RunEventRecord, type RunRecord } from '../records.ts';
import type { RunPatch, Store } from '../store.ts';
import { addRunEvents, type EventRow } from '../core/event-rows.ts';
import type { HeldSegment } from './pg-held-writes.ts';
import { checkRunChange, encodeEvents, runFields, whenValid, type RunField } from '../core/run-fields.ts';
import { copyRun, runColumnList, runFromRow, runToSql } from '../core/run-rows.ts';
import type { PgMerge } from './pg-outbox.ts';
import { appendWithSeq, changeRunOp, expectedRow, groupBy, insertRunOp, lockRunsOp } from './pg-run-writes.ts';
import { runOp } from './pg-lookups.ts';
import { pgRunQuery } from './pg-run-query.ts';
import type { PgStoreContext } from './pg-store-context.ts';

type RunMethods = Pick<
  Store,
  'insertRun' | 'transitionRun' | 'updateRun' | 'patchRun' | 'appendRunEvents' | 'getRun' | 'listRuns' | 'listRunEvents' | 'renewLeases' | 'claimRun'
>;

const activeStatuses = ['queued', 'running'];

/** A run's `run_event_rows` from the one holding the event after `$2` on (the rows before it hold none after it). */
const runEventRowsSql =
  'SELECT seq, at, type, data, last_seq FROM run_event_rows WHERE run_id = $1 AND seq >= COALESCE((SELECT seq FROM run_event_rows WHERE run_id = $1 AND seq <= $2 + 1 ORDER BY seq DESC LIMIT 1), 0) ORDER BY seq';

/**
 * Runs and their events on Postgres. Appends and changes that need nothing read back (events of
 * runs whose last seq this process knows, fields of runs it knows exist) are held in the open
 * segment and acknowledged at once; the others resolve after their commit. A compare-and-set
 * whose patch depends on the run (a run's end) is sent at once, guarded by the whole row being
 * as this process last left it, and reads the run first only when that guard fails.
 */
export function createPgRuns({ batches, name, write, read, lookup, ordered, refusal, eventSeqs, known, learnEvents, answers }: PgStoreContext): RunMethods {
  /** Holds events of runs whose last seq is known, each taking the next one. */
  function holdEvents(segment: HeldSegment, events: readonly NewRunEvent[], data: readonly string[]): void {
    events.forEach((event, index) => {
      event.seq = eventSeqs.next(event.run_id);
      segment.events.hold({ key: event.run_id, seq: event.seq, at: event.at, type: event.type, data: data[index], record: event });
    });
  }

  /** Writes events of runs whose last seq is not known here, in SQL; resolves after the commit. */
  function insertEvents(client: pg.ClientBase, events: readonly NewRunEvent[], data: readonly string[]): Promise<void> {
    const writes = [...groupBy(events, (event) => event.run_id)].map(([runId, indexes]) =>
      appendWithSeq(
        client,
        name,
        'run_event_rows',
        runId,
        indexes.map((index) => [events[index].at, events[index].type, data[index]] as const),
      ).then((seqs) => {
        indexes.forEach((index, place) => (events[index].seq = seqs[place]));
      }),
    );
    return Promise.all(writes).then(() => undefined);
  }

  return {
    insertRun(run, event) {
      const check = () => ({ values: runToSql(run) as unknown[], data: encodeEvents(run.id, [event]) });
      return whenValid(check, ({ values, data }) =>
        ordered([`r:${run.id}`], () =>
          batches
            .write((_client, _read, merge) =>
              merge(insertRunOp({ values, event, data: data[0] })).then((seq) => {
                if (seq === null) throw new Error(`A run with id '${run.id}' is already stored.`);
                event.seq = seq;
              }),
            )
            .then(() => {
              // What a read of the row would give (JSON fields as stored, the activity as decoded).
              known.keep(runFromRow(values));
              learnEvents([event]);
              answers.note(run);
            }),
        ),
      );
    },

    transitionRun({ id, from, to, patch = {}, patchFor: patchForGiven, check, event }) {
      // A check needs the run as it stands, as patchFor does: it goes the same way.
      const patchFor = check ? (current: RunRecord) => (check(current) ? (patchForGiven?.(current) ?? {}) : refusedPatch) : patchForGiven;
      const allowed = from.filter((status) => !isFinished(status));
      return whenValid(
        () => checkRunChange(id, patch, [event]),
        ({ fields, data }) => {
          if (allowed.length === 0) return ordered([`r:${id}`], () => write(async () => null));
          const change = (current: RunRecord | undefined | null, merge: PgMerge, expected?: unknown[]): Promise<RunRecord | null> => {
            let more: RunField[] = [];
            if (patchFor) {
              if (!current || !allowed.includes(current.status)) return Promise.resolve(null);
              const decided = patchFor(copyRun(current));
              if (decided === refusedPatch) return Promise.resolve(null);
              more = runFields(decided);
            }
            // Later fields win, as in an object spread: patchFor's over patch's.
            const merged = new Map([{ field: 'status', column: 'status', value: to, stored: to }, ...fields, ...more].map((field) => [field.column, field]));
            return merge(changeRunOp({ id, fields: [...merged.values()], allowed, expected, events: [event], data })).then(({ run, seqs }) => {
              if (run) event.seq = seqs[0];
              return run;
            });
          };
          // Committed: messages written from now on may refer to the run's answer.
          const done = (run: RunRecord | null) => {
            learnEvents([event]);
            if (run) {
              known.learn(run);
              answers.note(run);
            }
            return run;
          };
          // patchFor decides on the run as it stands: locked and read first, unless this process
          // knows it, when the write applies only to the row as known (else it reads first after all).
          const readFirst = (_client: pg.ClientBase, merge: PgMerge) => merge(lockRunsOp([id])).then((locked) => locked.get(id));
          const readingFirst = () => batches.write((_client, current: RunRecord | undefined, merge) => change(current, merge), { read: readFirst }).then(done);
          return ordered([`r:${id}`], () => {
            const assumed = patchFor ? known.get(id) : undefined;
            if (patchFor && !assumed) return readingFirst();
            const guarded = batches.write((_client, _read, merge) => change(assumed ?? null, merge, assumed && expectedRow(assumed)));
            if (!assumed) return guarded.then(done);
            return guarded.then((run) => (run ? done(run) : (known.forget(id), readingFirst())));
          });
        },
      );
    },

    updateRun(id, patch, events = []) {
      return whenValid(
        () => checkRunChange(id, patch, events),
        ({ fields, data }) =>
          ordered([`r:${id}`], () =>
            batches
              .write((_client, _read, merge) =>
                merge(changeRunOp({ id, fields, events, data })).then(({ run, seqs }) => {
                  seqs.forEach((seq, index) => (events[index].seq = seq));
                  return run;
                }),
              )
              .then((run) => {
                learnEvents(events);
                if (run) {
                  known.learn(run);
                  answers.note(run);
                }
                return run;
              }),
          ),
      );
    },

    patchRun(id, patch, events = []) {
      return whenValid(
        () => checkRunChange(id, patch, events),
        ({ fields, data }) =>
          ordered([`r:${id}`], (): boolean | Promise<boolean> => {
            if (eventSeqs.has(id)) {
              // A run this process wrote to exists: its fields and events are held, never read back.
              if (events.length === 0 && fields.length === 0) return true;
              const segment = batches.held();
              holdEvents(segment, events, data);
              if (fields.length > 0) {
                let held = segment.runs.get(id);
                if (!held) segment.runs.set(id, (held = new Map()));
                for (const field of fields) held.set(field.column, field.stored);
                known.patch(
                  id,
                  fields.map((field) => [field.field, field.value] as const),
                );
              }
              return true;
            }
            return batches
              .write((_client, _read, merge) =>
                merge(changeRunOp({ id, fields, events, data })).then(({ run, seqs }) => {
                  seqs.forEach((seq, index) => (events[index].seq = seq));
                  if (run) known.learn(run);
                  return run !== null;
                }),
              )
              .then((found) => {
                learnEvents(events);
                return found;
              });
          }),
      );
    },

    appendRunEvents(events) {
      if (events.length === 0) return refusal() ? Promise.reject(refusal()) : Promise.resolve();
      const runIds = [...new Set(events.map((event) => event.run_id))];
      return whenValid(
        () => encodeEvents(null, events),
        (data) =>
          ordered(
            runIds.map((id) => `r:${id}`),
            (): void | Promise<void> => {
              if (runIds.every((id) => eventSeqs.has(id))) return holdEvents(batches.held(), events, data);
              return batches.write((client) => insertEvents(client, events, data)).then(() => learnEvents(events));
            },
          ),
      );
    },

    getRun(id) {
      return lookup(runOp(id)).then((run) => {
        // Committed (a worker may have ended it): the messages this process writes next may refer to its answer.
        if (run !== null && run.result !== null) answers.note(run);
        return run;
      });
    },

    async listRuns(query) {
      const { sql, parameters } = pgRunQuery(query);
      const rows = await read<unknown[]>(sql, parameters, { array: true, listing: true });
      return rows.map((row) => runFromRow(row as unknown as unknown[]));
    },

    async listRunEvents(runId, { afterSeq = 0, limit } = {}) {
      const max = limit === undefined ? null : Math.max(0, Math.floor(limit));
      // Rows may hold several events each: the one holding the event after `afterSeq` comes first,
      // and `max + 1` rows hold at least `max` events after it.
      const rows = await read<unknown[]>(
        max === null ? runEventRowsSql : `${runEventRowsSql} LIMIT $3`,
        max === null ? [runId, afterSeq] : [runId, afterSeq, max + 1],
        { array: true, listing: true },
      );
      const events: RunEventRecord[] = [];
      for (const row of rows) addRunEvents(events, runId, row as unknown as EventRow, afterSeq);
      if (max !== null && events.length > max) events.length = max;
      return events;
    },

    renewLeases(owner, expiresAt) {
      const text = 'UPDATE runs SET lease_expires_at = $1 WHERE lease_owner = $2 AND status = ANY($3)';
      return write((client) => client.query(name({ text, values: [expiresAt, owner, activeStatuses] })).then(({ rowCount }) => rowCount ?? 0)).then((count) => {
        known.renewed(owner, expiresAt);
        return count;
      });
    },

    claimRun(id, owner, expiresAt, expiredBefore) {
      const text = `UPDATE runs SET lease_owner = $2, lease_expires_at = $3 WHERE id = $1 AND status = ANY($4) AND (lease_expires_at IS NULL OR lease_expires_at < $5) RETURNING ${runColumnList}`;
      return ordered([`r:${id}`], () =>
        batches
          .write((client) =>
            client
              .query({ ...name({ text, values: [id, owner, expiresAt, activeStatuses, expiredBefore] }), rowMode: 'array' })
              .then(({ rows }) => (rows[0] ? runFromRow(rows[0] as unknown[]) : null)),
          )
          .then((run) => {
            // The previous owner was another process that may have appended events.
            if (run) {
              eventSeqs.forget(id);
              known.learn(run);
            }
            return run;
          }),
      );
    },
  };
}

/** What a transition's check makes of its patch when it refuses the move: nothing is written. */
const refusedPatch: RunPatch = Object.freeze({});
