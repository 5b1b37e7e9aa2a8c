import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono, type MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { HTTPException } from 'hono/http-exception';
import type { Cadre } from '../runtime/create-cadre.ts';
import { defaultLogger } from '../logging/default-logger.ts';
import { errorLogger, type Logger } from '../logging/logger.ts';
import type { Sandbox } from '../tools/sandbox/create-sandbox.ts';
import type { WorkspaceTrustState } from '../config/workspace-trust.ts';
import { createAgentRoutes } from './agent-routes.ts';
import { createApprovalRoutes } from './approval-routes.ts';
import { createAccessToken, guardPosts, isLoopbackHost, isWildcardHost, requireAccess, securityHeaders } from './dashboard-security.ts';
import { streamCadreEvents } from './event-stream.ts';
import { shareListChanges } from './list-changes.ts';
import { createExportRoute } from './export-route.ts';
import { createRunRoutes } from './run-routes.ts';
import { createSessionRoutes } from './session-routes.ts';
import { createStaticAssets } from './static-assets.ts';
import { NotFoundError } from '../errors/not-found-error.ts';

/** Options of {@link createDashboardApp}. */
export interface DashboardAppOptions {
  cadre: Cadre;
  /** When set, every request must carry it (`Authorization: Bearer`, or `?token=` on GET). */
  token?: string | null;
  /** Milliseconds between SSE heartbeat comments. @default 15000 */
  heartbeatMs?: number;
  /** Where unexpected errors go (failed background turns, 500s). @default `logger.error` */
  onError?: (error: unknown) => void;
  /**
   * Where request logs (`info`: method, path without its query, status, milliseconds) and errors
   * go. @default the default logger (warnings and errors to stderr)
   */
  logger?: Logger;
  /**
   * The largest request body accepted, in bytes; a larger one gets 413 before it is held in
   * memory, whether it says its length or is streamed without one. @default 1048576 (1 MiB)
   */
  maxBodyBytes?: number;
  /**
   * The sandbox the runtime's `bash` runs in, shown at the top of the page and at
   * `GET /api/sandbox` (`{sandbox: null}` without one).
   */
  sandbox?: Pick<Sandbox, 'status'>;
  /**
   * Whether the workspace's own configuration is trusted (docs/security.md), shown at the top
   * of the page and at `GET /api/sandbox` as `workspace` (null without one).
   */
  workspace?: WorkspaceTrustView;
}

/** The workspace's trust as the dashboard shows it. */
export interface WorkspaceTrustView {
  /** `none`, `trusted`, `once`, `untrusted` or `changed`. */
  state: WorkspaceTrustState;
  /** What of its configuration was left out, one entry each (`mcpServers.evil (sh -c ...)`). */
  leftOut: string[];
}

/** The default of {@link DashboardAppOptions.maxBodyBytes}: 1 MiB, far above any prompt a person types. */
export const defaultMaxBodyBytes = 1024 * 1024;

/**
 * The dashboard and HTTP API of a cadre runtime as a Hono app: the page at `/`, JSON under
 * `/api`, live events at `/api/events`. Serve it with {@link startDashboard}, or test it with
 * `app.request()`.
 *
 * @example
 * const app = createDashboardApp({ cadre });
 * const response = await app.request('/api/sessions');
 */
export function createDashboardApp({
  cadre,
  token = null,
  heartbeatMs,
  logger = defaultLogger(),
  onError: log = errorLogger(logger),
  maxBodyBytes = defaultMaxBodyBytes,
  sandbox,
  workspace,
}: DashboardAppOptions): Hono {
  // What the server logs passes the runtime's redactor, like everything else cadre logs.
  const onError = (error: unknown) => log(cadre.redactor.redactError(error));
  const app = new Hono();
  app.use(logRequests(logger));
  app.use(securityHeaders());
  app.use(requireAccess({ token }));
  app.use(guardPosts());
  app.use(
    '/api/*',
    bodyLimit({
      maxSize: maxBodyBytes,
      onError: (context) => context.json({ error: `The request body is larger than ${maxBodyBytes} bytes; send a shorter one.` }, 413),
    }),
  );

  app.route('/', createStaticAssets({ token }));
  const listChanges = shareListChanges(cadre);
  app.get('/api/events', (context) => streamCadreEvents(context, { cadre, heartbeatMs, listChanges }));
  app.route('/api/sessions', createSessionRoutes({ cadre, onError }));
  app.route('/api/sessions', createExportRoute({ cadre }));
  app.route('/api/runs', createRunRoutes({ cadre }));
  app.route('/api/approvals', createApprovalRoutes({ cadre }));
  app.get('/api/sandbox', async (context) => context.json({ sandbox: sandbox === undefined ? null : await sandbox.status(), workspace: workspace ?? null }));
  app.route('/api/agents', createAgentRoutes({ cadre }));

  app.notFound((context) => context.json({ error: `No route ${context.req.method} ${context.req.path}.` }, 404));
  app.onError((error, context) => {
    if (error instanceof HTTPException) return context.json({ error: error.message }, error.status);
    if (NotFoundError.isInstance(error)) return context.json({ error: error.message }, 404);
    onError(error);
    return context.json({ error: 'Internal error; see the server log.' }, 500);
  });
  return app;
}

/** Options of {@link startDashboard}. */
export interface StartDashboardOptions {
  cadre: Cadre;
  /** Address to listen on. Anything but a loopback address turns on a random access token. @default '127.0.0.1' */
  host?: string;
  /** Port; 0 picks a free one. @default 4317 */
  port?: number;
  /** Require this token even on a loopback host. @default a random token on non-loopback hosts, none on loopback */
  token?: string;
  /** @default `logger.error` */
  onError?: (error: unknown) => void;
  /** See {@link DashboardAppOptions.logger}. */
  logger?: Logger;
  /** See {@link DashboardAppOptions.maxBodyBytes}. @default 1048576 (1 MiB) */
  maxBodyBytes?: number;
  /** See {@link DashboardAppOptions.sandbox}. @default none shown */
  sandbox?: Pick<Sandbox, 'status'>;
  /** See {@link DashboardAppOptions.workspace}. @default none shown */
  workspace?: WorkspaceTrustView;
}

/** A running dashboard. */
export interface Dashboard {
  /** The page's address, with `?token=` when a token is active; on `0.0.0.0` or `::`, its loopback address. */
  url: string;
  /** The access token, or null on a loopback address. Print it: it is the only way in. */
  token: string | null;
  /** Stops listening and drops open connections (event streams included). */
  close(): Promise<void>;
}

/**
 * Serves the dashboard over HTTP. On a loopback host (the default) no token is needed; on any
 * other host a random token guards every request.
 *
 * @example
 * const dashboard = await startDashboard({ cadre, port: 4317 });
 * console.log(`Dashboard: ${dashboard.url}`);
 */
export function startDashboard({
  cadre,
  host = '127.0.0.1',
  port = 4317,
  token: givenToken,
  onError,
  logger,
  maxBodyBytes,
  sandbox,
  workspace,
}: StartDashboardOptions): Promise<Dashboard> {
  const token = givenToken ?? (isLoopbackHost(host) ? null : createAccessToken());
  const app = createDashboardApp({ cadre, token, onError, logger, maxBodyBytes, sandbox, workspace });
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, hostname: host, port }, (info: AddressInfo) => {
      server.off('error', reject);
      // A server on every interface is reachable on loopback too, and browsers refuse 0.0.0.0.
      const reachable = isWildcardHost(host) ? (host === '0.0.0.0' ? '127.0.0.1' : '::1') : host;
      const shownHost = reachable.includes(':') ? `[${reachable.replace(/^\[|\]$/g, '')}]` : reachable;
      const url = `http://${shownHost}:${info.port}/${token === null ? '' : `?token=${token}`}`;
      resolve({
        url,
        token,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            if ('closeAllConnections' in server) server.closeAllConnections();
          }),
      });
    });
    server.once('error', reject);
  });
}

/** A request log line per request once it is answered; the query (which may hold the token) is left out. */
function logRequests(logger: Logger): MiddlewareHandler {
  return async function requestLog(context, next) {
    const started = performance.now();
    await next();
    logger.info(
      { method: context.req.method, path: context.req.path, status: context.res.status, durationMs: Math.round(performance.now() - started) },
      'request',
    );
  };
}
