import type { TelemetryOptions } from 'ai';
import type { SecretRedactor } from '../models/secret-redactor.ts';
import type { RunBus } from '../runs/run-bus.ts';
import type { Store } from '../store/store.ts';
import type { Now, NowMs } from '../util/clock.ts';

/**
 * What every agent loop of a runtime shares, subagent runs (an executor's) and primary turns (the
 * session runner's) alike: built once by the runtime and handed to both.
 */
export interface LoopContext {
  store: Store;
  bus: RunBus;
  now: Now;
  /** The clock in epoch milliseconds (throttles). @default systemNowMs */
  nowMs?: NowMs;
  /** This process's identity in leases: tool calls under way name it. */
  ownerId: string;
  /** Lease length, after which calls of a dead process on another host get their results. @default 15000 */
  leaseMs?: number;
  /** Redacts the error a loop ends with. @default nothing is redacted */
  redactor?: SecretRedactor;
  /** The AI SDK's telemetry settings of every loop. @default on only while someone receives it */
  telemetry?: TelemetryOptions;
  /** Whether a loop that starts now streams its text (someone watches live). @default always */
  stream?: () => boolean;
  onError?: (error: unknown) => void;
}
