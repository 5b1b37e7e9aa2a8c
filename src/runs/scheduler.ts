/** Slot limits of the {@link Scheduler}. */
export interface SchedulerLimits {
  /** @default 5 */
  maxActivePerParent: number;
  /** @default 50 */
  maxQueuedPerParent: number;
  /** @default 64 */
  maxActiveGlobal: number;
}

/** One run waiting for, or holding, a slot. */
export interface SchedulerEntry {
  runId: string;
  parentSessionId: string;
  /** Called once when the run gets its slot. */
  start: () => void;
}

/** What {@link Scheduler.admit} did with a run. */
export type Admission = 'started' | 'queued' | 'full';

/**
 * Gives runs their slots: at most `maxActivePerParent` running per parent session and
 * `maxActiveGlobal` in the process; the rest wait in FIFO order per parent. Parents with a free
 * slot and waiting runs take global slots in the order they became ready, so one busy parent
 * cannot starve the others. Every operation is O(1) amortized.
 */
export interface Scheduler {
  admit(entry: SchedulerEntry): Admission;
  /** Frees the slot of a running run, or drops a queued one; starts whoever is next. */
  release(runId: string): void;
  /** Whether the run is waiting for a slot. */
  isQueued(runId: string): boolean;
  counts(parentSessionId: string): { active: number; queued: number };
  totals(): { active: number; queued: number };
}

interface ParentSlots {
  active: Set<string>;
  queue: SchedulerEntry[];
  /** Index of the first live entry in `queue` (dropping from the front without shifting). */
  head: number;
  ready: boolean;
}

/** Creates a {@link Scheduler}. */
export function createScheduler(limits: SchedulerLimits): Scheduler {
  const parents = new Map<string, ParentSlots>();
  const queuedRuns = new Map<string, SchedulerEntry>();
  const activeRuns = new Map<string, string>();
  const readyParents: string[] = [];
  let readyHead = 0;

  function slotsOf(parentSessionId: string): ParentSlots {
    let slots = parents.get(parentSessionId);
    if (!slots) {
      slots = { active: new Set(), queue: [], head: 0, ready: false };
      parents.set(parentSessionId, slots);
    }
    return slots;
  }

  function nextQueued(slots: ParentSlots): SchedulerEntry | undefined {
    while (slots.head < slots.queue.length) {
      const entry = slots.queue[slots.head];
      if (queuedRuns.get(entry.runId) === entry) return entry;
      slots.head++;
    }
    slots.queue = [];
    slots.head = 0;
    return undefined;
  }

  function markReady(parentSessionId: string, slots: ParentSlots): void {
    if (slots.ready || slots.active.size >= limits.maxActivePerParent || !nextQueued(slots)) return;
    slots.ready = true;
    readyParents.push(parentSessionId);
  }

  function begin(entry: SchedulerEntry, slots: ParentSlots): void {
    slots.active.add(entry.runId);
    activeRuns.set(entry.runId, entry.parentSessionId);
    entry.start();
  }

  function pump(): void {
    while (activeRuns.size < limits.maxActiveGlobal && readyHead < readyParents.length) {
      const parentSessionId = readyParents[readyHead++];
      const slots = parents.get(parentSessionId);
      if (!slots) continue;
      slots.ready = false;
      const entry = nextQueued(slots);
      if (!entry || slots.active.size >= limits.maxActivePerParent) continue;
      slots.head++;
      queuedRuns.delete(entry.runId);
      begin(entry, slots);
      markReady(parentSessionId, slots);
    }
    if (readyHead > 1024 && readyHead * 2 > readyParents.length) {
      readyParents.splice(0, readyHead);
      readyHead = 0;
    }
  }

  function cleanUp(parentSessionId: string, slots: ParentSlots): void {
    if (slots.active.size === 0 && !nextQueued(slots) && !slots.ready) parents.delete(parentSessionId);
  }

  return {
    admit(entry) {
      const slots = slotsOf(entry.parentSessionId);
      const waiting = slots.queue.length - slots.head;
      if (slots.active.size < limits.maxActivePerParent && activeRuns.size < limits.maxActiveGlobal && !nextQueued(slots)) {
        begin(entry, slots);
        return 'started';
      }
      if (waiting >= limits.maxQueuedPerParent && countQueued(slots) >= limits.maxQueuedPerParent) {
        cleanUp(entry.parentSessionId, slots);
        return 'full';
      }
      slots.queue.push(entry);
      queuedRuns.set(entry.runId, entry);
      markReady(entry.parentSessionId, slots);
      return 'queued';
    },

    release(runId) {
      const queued = queuedRuns.get(runId);
      if (queued) {
        queuedRuns.delete(runId);
        const slots = parents.get(queued.parentSessionId);
        if (slots) cleanUp(queued.parentSessionId, slots);
        return;
      }
      const parentSessionId = activeRuns.get(runId);
      if (parentSessionId === undefined) return;
      activeRuns.delete(runId);
      const slots = parents.get(parentSessionId);
      if (slots) {
        slots.active.delete(runId);
        markReady(parentSessionId, slots);
        cleanUp(parentSessionId, slots);
      }
      pump();
    },

    isQueued(runId) {
      return queuedRuns.has(runId);
    },

    counts(parentSessionId) {
      const slots = parents.get(parentSessionId);
      return { active: slots?.active.size ?? 0, queued: slots ? countQueued(slots) : 0 };
    },

    totals() {
      return { active: activeRuns.size, queued: queuedRuns.size };
    },
  };

  function countQueued(slots: ParentSlots): number {
    let count = 0;
    for (let index = slots.head; index < slots.queue.length; index++) {
      if (queuedRuns.get(slots.queue[index].runId) === slots.queue[index]) count++;
    }
    return count;
  }
}
