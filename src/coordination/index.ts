/** The coordination port: signals between the processes that share a store, and its embedded engine. */
export {
  signalKey,
  type Coordination,
  type CoordinationSignal,
  type LiveRunEvent,
  type RunOutputEvent,
  type SignalOf,
  type SignalType,
} from './coordination.ts';
export { createPollingCoordination, type PollingCoordinationOptions } from './polling-coordination.ts';
export { createSignalListeners, type SignalListeners } from './signal-listeners.ts';
