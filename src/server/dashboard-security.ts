import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';

/** The Content-Security-Policy of every response: no inline script or style, nothing from elsewhere. */
export const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; frame-ancestors 'none'";

const loopbackNames = new Set(['localhost', '::1', '[::1]']);

/** Whether a host name or address only accepts connections from this machine. */
export function isLoopbackHost(host: string): boolean {
  const name = host.toLowerCase();
  return loopbackNames.has(name) || /^127(\.\d{1,3}){3}$/.test(name) || name === '::ffff:127.0.0.1';
}

/** Whether a host is the address of every interface (`0.0.0.0`, `::`), which no browser can open. */
export function isWildcardHost(host: string): boolean {
  return host === '0.0.0.0' || host === '::' || host === '[::]';
}

/** A fresh random access token: 24 random bytes, base64url. */
export function createAccessToken(): string {
  return randomBytes(24).toString('base64url');
}

/** The host name part of a `Host` header (`127.0.0.1:4317`, `[::1]:80`, `localhost`). */
function hostNameOf(hostHeader: string): string {
  if (hostHeader.startsWith('[')) return hostHeader.slice(0, hostHeader.indexOf(']') + 1);
  return hostHeader.split(':')[0];
}

function sameSecret(given: string, expected: string): boolean {
  const givenBytes = Buffer.from(given);
  const expectedBytes = Buffer.from(expected);
  return givenBytes.length === expectedBytes.length && timingSafeEqual(givenBytes, expectedBytes);
}

function bearerOf(authorization: string | undefined): string | null {
  const match = /^Bearer\s+(\S+)$/i.exec(authorization ?? '');
  return match ? match[1] : null;
}

/**
 * Sets the security headers on every response: the CSP, `nosniff`, no framing, no referrer
 * (the page URL may hold the token), and no caching of data.
 */
export function securityHeaders(): MiddlewareHandler {
  return async function setSecurityHeaders(context, next) {
    await next();
    context.header('Content-Security-Policy', contentSecurityPolicy);
    context.header('X-Content-Type-Options', 'nosniff');
    context.header('X-Frame-Options', 'DENY');
    context.header('Referrer-Policy', 'no-referrer');
    context.header('Cache-Control', 'no-store');
  };
}

/**
 * Lets a request through only when it may act on the dashboard.
 *
 * - With a token, every request must carry it: `Authorization: Bearer <token>`, or, for GET only
 *   (the page, downloads, EventSource), `?token=`. Missing or wrong: 401.
 * - Without a token (loopback only), the `Host` header must name a loopback host, so a web page
 *   that rebinds its own domain name to 127.0.0.1 cannot read or drive the API: 403.
 */
export function requireAccess({ token }: { token: string | null }): MiddlewareHandler {
  return async function checkAccess(context, next) {
    if (token === null) {
      const host = context.req.header('host');
      if (host !== undefined && !isLoopbackHost(hostNameOf(host))) {
        return context.json({ error: 'This dashboard only answers requests addressed to a loopback host.' }, 403);
      }
      return next();
    }
    const fromHeader = bearerOf(context.req.header('authorization'));
    const reading = context.req.method === 'GET' || context.req.method === 'HEAD';
    const fromQuery = reading ? context.req.query('token') : undefined;
    const given = fromHeader ?? fromQuery ?? null;
    if (given === null || !sameSecret(given, token)) {
      const where = reading ? 'an Authorization: Bearer header or ?token=' : 'an Authorization: Bearer header';
      return context.json({ error: `A valid access token is required in ${where}.` }, 401);
    }
    return next();
  };
}

/**
 * Guards state changes: only POST changes anything, and a POST must be JSON and come from the
 * dashboard's own origin (Origin and Sec-Fetch-Site are checked when the browser sends them).
 */
export function guardPosts(): MiddlewareHandler {
  return async function checkPost(context, next) {
    if (context.req.method !== 'POST') return next();
    const fetchSite = context.req.header('sec-fetch-site');
    if (fetchSite !== undefined && fetchSite !== 'same-origin' && fetchSite !== 'none') {
      return context.json({ error: 'Cross-site requests may not change anything.' }, 403);
    }
    const origin = context.req.header('origin');
    if (origin !== undefined && origin !== new URL(context.req.url).origin) {
      return context.json({ error: `Requests from origin ${origin} may not change anything.` }, 403);
    }
    const contentType = context.req.header('content-type') ?? '';
    if (contentType.split(';')[0].trim().toLowerCase() !== 'application/json') {
      return context.json({ error: 'Send the body as JSON with Content-Type: application/json.' }, 415);
    }
    return next();
  };
}
