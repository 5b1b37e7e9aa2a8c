/**
 * `cadre serve`: the dashboard page and the HTTP API over a cadre runtime.
 * @module
 */

// First, so that an unsupported Node gets one clear line rather than a failure deep inside.
import '../util/require-supported-node.ts';

export {
  createDashboardApp,
  startDashboard,
  type Dashboard,
  type DashboardAppOptions,
  type StartDashboardOptions,
} from './create-server.ts';
export { createAccessToken, isLoopbackHost } from './dashboard-security.ts';
export { sessionOfEvent } from '../runs/run-bus.ts';
export type { SessionState, SessionSummary } from './session-views.ts';
