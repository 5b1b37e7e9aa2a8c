import type { DelegationServices } from '../delegation/delegation-services.ts';
import type { RunManager } from '../runs/run-manager.ts';
import type { WorkflowRecord } from '../store/records.ts';
import type { Store } from '../store/store.ts';
import type { NewId, Now, NowMs } from '../util/clock.ts';
import type { WorkflowScript } from './workflow-api.ts';

/** What the workflow engine needs from the runtime. */
export interface WorkflowServices {
  store: Store;
  runs: RunManager;
  /** Starts each call's run as the `agent` tool does (child session, first message, caps). */
  delegation: DelegationServices;
  now: Now;
  nowMs: NowMs;
  newId: NewId;
  /** This process's identity in leases. */
  ownerId: string;
  /** How long a workflow's lease lasts without renewal. */
  leaseMs: number;
  /** Calls of one workflow with a run going at once (`limits.maxActivePerParent`). */
  maxActive: number;
  /** A new primary session for a workflow started without one. */
  createSession: () => Promise<string>;
  /** Recovers the runs of a session whose process died (resumes those of cadre's loop). */
  recover: (sessionId: string) => Promise<void>;
  /** The script of a stored workflow (its file, its registered name), or null when this process cannot give it. */
  loadScript: (workflow: WorkflowRecord) => Promise<WorkflowScript | null>;
  /** How often a running workflow looks for a stop asked by another process, and renews its lease. @default 250 */
  pollMs?: number;
  /** Runs a workflow's script in a trace span (the runs it starts nest under it). @default no span */
  traceWorkflow?: <T extends { error?: { message: string } }>(workflow: { id: string; name: string; sessionId: string; replay: boolean }, work: () => Promise<T>) => Promise<T>;
  /** Called with a workflow as written, after each change this process makes. */
  onChange?: (workflow: WorkflowRecord) => void;
  onError: (error: unknown) => void;
}
