import { Redis } from 'ioredis';
import { reportToDefaultLogger } from '../logging/default-logger.ts';
import { timeSortedId, type NewId } from '../util/clock.ts';
import type { Store } from '../store/store.ts';
import type { Coordination, CoordinationSignal } from './coordination.ts';
import { createPollingCoordination } from './polling-coordination.ts';

/**
 * How often the store is read for the runs whose end someone awaits, in case their `run-ended`
 * was lost: a host awaits every run it sent to the workers (all of them are read at once, see
 * `createPollingCoordination`), and those who await one read it again on their own as well.
 */
const runEndedBackstopMs = 2_000;

/** Options of {@link createRedisCoordination}. */
export interface RedisCoordinationOptions {
  /** The queue's Redis: a `redis://` URL, with the optional `?prefix=` of the queue. */
  url: string;
  /** The store the processes share: signals nobody announced (or lost while Redis was down) are still found there. */
  store: Store;
  /** @default the default logger (stderr) */
  onError?: (error: unknown) => void;
  /** Makes this coordination's origin id, by which it knows its own signals when they come back. @default timeSortedId */
  newId?: NewId;
}

/**
 * Coordination over Redis publish/subscribe, on the server of the run queue: a signal published
 * in any process reaches every process using the same Redis and prefix within milliseconds, live
 * events of runs on workers included. The store is still polled as with the embedded engine, at
 * the same pace (`run-ended` excepted, every 2 s rather than 100 ms: a host listens for each run it
 * sent to a worker, often a thousand at once), so a signal published while Redis was down (or
 * never announced) is found all the same; ioredis reconnects and subscribes again on its own
 * after a restart. Run output (streamed text and messages of runs on workers, many small signals
 * for one host) travels on a channel per host, `<prefix>:output:<host>`, that only processes
 * listening for that host subscribe to; live events travel on `<prefix>:live`, that only
 * processes listening for live events (hosts, not workers) subscribe to.
 *
 * @example
 * const coordination = createRedisCoordination({ url: 'redis://127.0.0.1:6379', store });
 */
export function createRedisCoordination({ url, store, onError = reportToDefaultLogger, newId = timeSortedId }: RedisCoordinationOptions): Coordination {
  const parsed = new URL(url.trim());
  const prefix = parsed.searchParams.get('prefix') ?? 'cadre';
  const channel = `${prefix}:signals`;
  /**
   * Run output is many messages for one process: it goes on that process's own channel, which
   * only it listens to, rather than to every process on the shared one.
   */
  const outputChannel = (host: string) => `${prefix}:output:${host}`;
  /**
   * Live events of runs on workers are many, and only hosts listen to them: they go on a channel
   * of their own, which a process subscribes to once something in it listens for live events, so
   * a worker does not read every other worker's events.
   */
  const liveChannel = `${prefix}:live`;
  let liveSubscribed = false;
  /** The listeners of this process's output channels, per host, to subscribe each channel once. */
  const outputListeners = new Map<string, number>();
  /** Where a provider's 429 pause is kept, for processes that start during it. */
  const pauseKey = (provider: string) => `${prefix}:rate-limited:${provider}`;
  parsed.searchParams.delete('prefix');
  const origin = `${process.pid}:${newId('crd')}`;
  const local = createPollingCoordination({ store, onError, pollMs: { 'run-ended': runEndedBackstopMs } });
  // A signal waits for a server that is restarting through one reconnection at most, then is
  // dropped: the store has what it points at.
  const retryStrategy = (times: number) => Math.min(times * 100, 2_000);
  const sender = new Redis(parsed.toString(), { maxRetriesPerRequest: 1, retryStrategy });
  const listener = new Redis(parsed.toString(), { maxRetriesPerRequest: null, retryStrategy });
  // Connection errors repeat while the server is down; one report per outage is enough.
  let down = false;
  const onConnectionError = (error: unknown) => {
    if (down) return;
    down = true;
    onError(error);
  };
  for (const connection of [sender, listener]) {
    connection.on('error', onConnectionError);
    connection.on('ready', () => (down = false));
  }
  listener.subscribe(channel).catch(onConnectionError);
  listener.on('message', (_channel: string, payload: string) => {
    let message: { origin: string; signal: CoordinationSignal };
    try {
      message = JSON.parse(payload);
    } catch (error) {
      onError(error);
      return;
    }
    if (message.origin !== origin) local.publish(message.signal);
  });

  /** Listens to a host's output channel while this process has listeners of it; ioredis subscribes again after reconnecting. */
  function listenToOutput(host: string, off: () => void): () => void {
    const count = outputListeners.get(host) ?? 0;
    outputListeners.set(host, count + 1);
    if (count === 0) listener.subscribe(outputChannel(host)).catch(onConnectionError);
    let listening = true;
    return () => {
      off();
      if (!listening) return;
      listening = false;
      const left = (outputListeners.get(host) ?? 1) - 1;
      if (left > 0) return void outputListeners.set(host, left);
      outputListeners.delete(host);
      listener.unsubscribe(outputChannel(host)).catch(onConnectionError);
    };
  }

  return {
    publish(signal) {
      local.publish(signal);
      const to = signal.type === 'run-output' ? outputChannel(signal.host) : signal.type === 'live-event' ? liveChannel : channel;
      sender.publish(to, JSON.stringify({ origin, signal })).catch(onConnectionError);
      if (signal.type === 'rate-limited') sender.set(pauseKey(signal.provider), '1', 'PX', Math.ceil(signal.delay_ms)).catch(onConnectionError);
    },
    subscribe(type, key, callback) {
      const off = local.subscribe(type, key, callback);
      if (type === 'run-output') return listenToOutput(key, off);
      // Subscribed from the first listener on, for good: a host listens again with each run it sends.
      if (type === 'live-event' && !liveSubscribed) {
        liveSubscribed = true;
        listener.subscribe(liveChannel).catch(onConnectionError);
      }
      // A pause that began before this process listened still holds for the rest of its time.
      if (type === 'rate-limited') {
        sender.pttl(pauseKey(key)).then((remaining) => {
          if (remaining > 0) callback({ type: 'rate-limited', provider: key, delay_ms: remaining } as never);
        }, onConnectionError);
      }
      return off;
    },
    async close() {
      await local.close();
      listener.disconnect();
      sender.disconnect();
    },
  };
}
