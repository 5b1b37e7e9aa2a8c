import pg from 'pg';
import type { Store } from '../store/store.ts';
import type { Coordination, CoordinationSignal } from './coordination.ts';
import { createPollingCoordination } from './polling-coordination.ts';
import { reportToDefaultLogger } from '../logging/default-logger.ts';
import { timeSortedId, type NewId } from '../util/clock.ts';

/** Options of {@link createPostgresCoordination}. */
export interface PostgresCoordinationOptions {
  /** The database the store uses (`postgres://...`, with its `?schema=` if any). */
  connectionString: string;
  /** The store on that database: signals nobody announced (an older writer) are still found there. */
  store: Store;
  /** @default the default logger (stderr) */
  onError?: (error: unknown) => void;
  /** Makes this coordination's origin id, by which it knows its own signals when they come back. @default timeSortedId */
  newId?: NewId;
}

/** NOTIFY payloads must stay under 8000 bytes. */
const maxPayload = 7_500;

/**
 * Coordination over Postgres LISTEN/NOTIFY: a signal published in any process reaches every
 * process on the same database (and schema) within milliseconds. The store is still polled as
 * with the embedded engine, at the same pace, so a signal lost while a connection was down (a
 * server restart) or never announced is found all the same. The listening connection comes back
 * on its own after a restart. A live event too large for a notification travels without its
 * run record; receivers read the run from the store.
 *
 * @example
 * const coordination = await createPostgresCoordination({ connectionString, store });
 */
export async function createPostgresCoordination({
  connectionString,
  store,
  onError = reportToDefaultLogger,
  newId = timeSortedId,
}: PostgresCoordinationOptions): Promise<Coordination> {
  const url = new URL(connectionString);
  const schema = url.searchParams.get('schema') ?? 'public';
  url.searchParams.delete('schema');
  const channel = `cadre_signals_${schema}`.toLowerCase();
  const origin = `${process.pid}:${newId('crd')}`;
  const local = createPollingCoordination({ store, onError });
  const sender = new pg.Pool({ connectionString: url.toString(), max: 2 });
  sender.on('error', onError);
  let listener: pg.Client | null = null;
  let closed = false;
  let reconnecting: NodeJS.Timeout | null = null;

  function receive(payload: string | undefined): void {
    if (!payload) return;
    let message: { origin: string; signal: CoordinationSignal & { run?: unknown }; run_id?: string };
    try {
      message = JSON.parse(payload);
    } catch (error) {
      onError(error);
      return;
    }
    if (message.origin === origin) return;
    const { signal } = message;
    if (signal.type === 'live-event' && signal.run === undefined && message.run_id) {
      store.getRun(message.run_id).then((run) => {
        if (run) local.publish({ ...signal, run });
      }, onError);
      return;
    }
    local.publish(signal);
  }

  async function listen(): Promise<void> {
    const client = new pg.Client({ connectionString: url.toString() });
    client.on('notification', (notification) => receive(notification.payload));
    const lost = (error?: unknown) => {
      if (listener !== client) return;
      listener = null;
      if (error) onError(error);
      client.end().catch(() => {});
      scheduleReconnect();
    };
    client.on('error', lost);
    client.on('end', () => lost());
    await client.connect();
    await client.query(`LISTEN ${channel}`);
    listener = client;
  }

  function scheduleReconnect(delay = 250): void {
    if (closed || reconnecting) return;
    reconnecting = setTimeout(() => {
      reconnecting = null;
      listen().catch(() => scheduleReconnect(Math.min(5_000, delay * 2)));
    }, delay);
    reconnecting.unref();
  }

  await listen();

  return {
    publish(signal) {
      local.publish(signal);
      let payload = JSON.stringify({ origin, signal });
      if (payload.length > maxPayload && signal.type === 'live-event') {
        const { run, ...rest } = signal;
        payload = JSON.stringify({ origin, signal: rest, run_id: run.id });
      }
      if (payload.length > maxPayload) return;
      const notify = () => void sender.query('SELECT pg_notify($1, $2)', [channel, payload]).catch(onError);
      // The store acknowledges some writes before their commit (group commit): other processes
      // hear of a change only once it is committed, so what they read then holds it. A live
      // event carries what it announces.
      if (signal.type === 'live-event') notify();
      else store.flush().then(notify, notify);
    },
    subscribe(type, key, callback) {
      return local.subscribe(type, key, callback);
    },
    async close() {
      closed = true;
      if (reconnecting) clearTimeout(reconnecting);
      const client = listener;
      listener = null;
      await local.close();
      await client?.end().catch(() => {});
      await sender.end().catch(() => {});
    },
  };
}
