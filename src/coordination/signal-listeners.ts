import { signalKey, type CoordinationSignal, type SignalOf, type SignalType } from './coordination.ts';

/** The listeners of one process, by kind and key; every coordination engine dispatches through one. */
export interface SignalListeners {
  add<T extends SignalType>(type: T, key: string, listener: (signal: SignalOf<T>) => void): () => void;
  /** Calls the listeners of the signal's kind and key; one that throws is reported, the others still run. */
  dispatch(signal: CoordinationSignal): void;
  /** The keys someone listens to, of one kind. */
  keys(type: SignalType): string[];
  /** Whether anyone listens to this kind. */
  has(type: SignalType): boolean;
}

type Listener = (signal: CoordinationSignal) => void;

/** Creates the {@link SignalListeners} of a coordination engine; `onChange` hears when the first listener of a kind comes and its last one goes. */
export function createSignalListeners({
  onError,
  onChange,
}: {
  onError: (error: unknown) => void;
  onChange?: (type: SignalType, listening: boolean) => void;
}): SignalListeners {
  const byType = new Map<SignalType, Map<string, Set<Listener>>>();
  return {
    add(type, key, listener) {
      let byKey = byType.get(type);
      if (!byKey) {
        byType.set(type, (byKey = new Map()));
        onChange?.(type, true);
      }
      let set = byKey.get(key);
      if (!set) byKey.set(key, (set = new Set()));
      const entry = listener as Listener;
      set.add(entry);
      return () => {
        if (!set.delete(entry) || set.size > 0) return;
        byKey.delete(key);
        if (byKey.size === 0 && byType.get(type) === byKey) {
          byType.delete(type);
          onChange?.(type, false);
        }
      };
    },
    dispatch(signal) {
      const set = byType.get(signal.type)?.get(signalKey(signal));
      if (!set) return;
      for (const listener of [...set]) {
        try {
          listener(signal);
        } catch (error) {
          onError(error);
        }
      }
    },
    keys(type) {
      return [...(byType.get(type)?.keys() ?? [])];
    },
    has(type) {
      return byType.has(type);
    },
  };
}
