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
  /** Queue it even past `maxQueuedPerParent`: a run a person already approved (an ask on a delegation) is not refused after. */
  pastQueueCap?: boolean;
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
  /**
   * Starts a run that already holds its slot elsewhere (the host that scheduled a worker's job,
   * or a dead process whose running run is resumed) at once, whatever the limits here: it
   * counts as active, so runs admitted after it wait for it.
   */
  occupy(entry: SchedulerEntry): void;
  /** Frees the slot of a running run, or drops a queued one; starts whoever is next. */
  release(runId: string): void;
  /** Whether the run is waiting for a slot. */
  isQueued(runId: string): boolean;
  counts(parentSessionId: string): { active: number; queued: number };
  totals(): { active: number; queued: number };
}

interface ParentSlots {
  active: Set<string>;
  /** Entries in admission order; released ones stay until they reach the front. */
  queue: SchedulerEntry[];
  /** Index of the first entry in `queue` not yet started or dropped (dropping without shifting). */
  head: number;
  /** How many entries of `queue` still wait. */
  waiting: number;
}

/** Creates a {@link Scheduler}. */
export function createScheduler(limits: SchedulerLimits): Scheduler {
  const parents = new Map<string, ParentSlots>();
  const queuedRuns = new Map<string, SchedulerEntry>();
  const activeRuns = new Map<string, string>();
  /** Parents with a free slot and a waiting run, in the order they became so (a Set keeps it). */
  const ready = new Set<string>();

  function slotsOf(parentSessionId: string): ParentSlots {
    let slots = parents.get(parentSessionId);
    if (!slots) {
      slots = { active: new Set(), queue: [], head: 0, waiting: 0 };
      parents.set(parentSessionId, slots);
    }
    return slots;
  }

  /** The first entry still waiting, dropping released ones from the front. */
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
    if (slots.waiting > 0 && slots.active.size < limits.maxActivePerParent) ready.add(parentSessionId);
  }

  function begin(entry: SchedulerEntry, slots: ParentSlots): void {
    slots.active.add(entry.runId);
    activeRuns.set(entry.runId, entry.parentSessionId);
    entry.start();
  }

  function pump(): void {
    for (const parentSessionId of ready) {
      if (activeRuns.size >= limits.maxActiveGlobal) return;
      ready.delete(parentSessionId);
      // A ready parent has a waiting run and a free slot: it is kept until then.
      const slots = parents.get(parentSessionId)!;
      const entry = nextQueued(slots)!;
      slots.head++;
      slots.waiting--;
      queuedRuns.delete(entry.runId);
      begin(entry, slots);
      markReady(parentSessionId, slots);
    }
  }

  function cleanUp(parentSessionId: string, slots: ParentSlots): void {
    if (slots.active.size === 0 && slots.waiting === 0) parents.delete(parentSessionId);
  }

  return {
    admit(entry) {
      const slots = slotsOf(entry.parentSessionId);
      if (slots.waiting === 0 && slots.active.size < limits.maxActivePerParent && activeRuns.size < limits.maxActiveGlobal) {
        begin(entry, slots);
        return 'started';
      }
      if (slots.waiting >= limits.maxQueuedPerParent && !entry.pastQueueCap) return 'full';
      slots.queue.push(entry);
      slots.waiting++;
      queuedRuns.set(entry.runId, entry);
      markReady(entry.parentSessionId, slots);
      return 'queued';
    },

    occupy(entry) {
      begin(entry, slotsOf(entry.parentSessionId));
    },

    release(runId) {
      const queued = queuedRuns.get(runId);
      if (queued) {
        queuedRuns.delete(runId);
        const slots = parents.get(queued.parentSessionId)!;
        slots.waiting--;
        if (slots.waiting === 0) {
          // Nothing waits: the released entries go, and the parent has nothing to start.
          slots.queue = [];
          slots.head = 0;
          ready.delete(queued.parentSessionId);
        }
        cleanUp(queued.parentSessionId, slots);
        return;
      }
      const parentSessionId = activeRuns.get(runId);
      if (parentSessionId === undefined) return;
      activeRuns.delete(runId);
      const slots = parents.get(parentSessionId)!;
      slots.active.delete(runId);
      markReady(parentSessionId, slots);
      cleanUp(parentSessionId, slots);
      pump();
    },

    isQueued(runId) {
      return queuedRuns.has(runId);
    },

    counts(parentSessionId) {
      const slots = parents.get(parentSessionId);
      return { active: slots?.active.size ?? 0, queued: slots?.waiting ?? 0 };
    },

    totals() {
      return { active: activeRuns.size, queued: queuedRuns.size };
    },
  };
}
