import { readdirSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { Cadre } from '../runtime/create-cadre.ts';
import { createDashboardApp } from './create-server.ts';
import { createAccessToken, isLoopbackHost, isWildcardHost } from './dashboard-security.ts';
import { createTestCadre } from './server-fixtures.ts';

const open: Cadre[] = [];
afterEach(async () => {
  for (const cadre of open.splice(0)) await cadre.close();
});

function setup(token?: string) {
  const cadre = createTestCadre();
  open.push(cadre);
  return createDashboardApp({
    cadre,
    token,
    onError: (error) => {
      throw error;
    },
  });
}

const json = { 'Content-Type': 'application/json' };

describe('the dashboard security', () => {
  it('knows loopback hosts and makes long random tokens', () => {
    expect(['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]'].every(isLoopbackHost)).toBe(true);
    expect(['0.0.0.0', '::', '192.168.1.5', 'example.com'].some(isLoopbackHost)).toBe(false);
    expect(['0.0.0.0', '::', '[::]'].every(isWildcardHost)).toBe(true);
    expect(['127.0.0.1', '192.168.1.5', 'localhost'].some(isWildcardHost)).toBe(false);
    const token = createAccessToken();
    expect(token).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(createAccessToken()).not.toBe(token);
  });

  it('requires the token on every request when one is set: 401 when it is missing or wrong', async () => {
    const app = setup('secret-token');
    for (const path of ['/', '/app.js', '/api/sessions', '/api/events']) {
      expect((await app.request(path)).status).toBe(401);
    }
    expect((await app.request('/api/sessions', { headers: { Authorization: 'Bearer wrong-token' } })).status).toBe(401);
    expect((await app.request('/api/sessions?token=wrong-token')).status).toBe(401);
    expect((await app.request('/api/sessions', { headers: { Authorization: 'Bearer secret-token' } })).status).toBe(200);
    expect((await app.request('/api/sessions?token=secret-token')).status).toBe(200);
    const page = await app.request('/?token=secret-token');
    expect(await page.text()).toContain('src="/app.js?token=secret-token"');
    expect((await app.request('/app.js?token=secret-token')).headers.get('content-type')).toContain('text/javascript');
  });

  it('accepts a token only in the Authorization header on POST', async () => {
    const app = setup('secret-token');
    const body = JSON.stringify({ prompt: 'hello' });
    expect((await app.request('/api/sessions?token=secret-token', { method: 'POST', body, headers: json })).status).toBe(401);
    const accepted = await app.request('/api/sessions', {
      method: 'POST',
      body: JSON.stringify({ prompt: 'hello', agent: 'nobody' }),
      headers: { ...json, Authorization: 'Bearer secret-token' },
    });
    expect(accepted.status).toBe(400);
  });

  it('rejects a POST without a JSON content type with 415', async () => {
    const app = setup();
    const response = await app.request('/api/sessions', {
      method: 'POST',
      body: 'prompt=hello',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    expect(response.status).toBe(415);
    expect((await app.request('/api/sessions', { method: 'POST', body: '{}' })).status).toBe(415);
  });

  it('rejects cross-origin and cross-site POSTs with 403', async () => {
    const app = setup();
    const body = JSON.stringify({ prompt: 'hello' });
    expect((await app.request('/api/sessions', { method: 'POST', body, headers: { ...json, Origin: 'http://evil.example' } })).status).toBe(403);
    expect((await app.request('/api/sessions', { method: 'POST', body, headers: { ...json, 'Sec-Fetch-Site': 'cross-site' } })).status).toBe(403);
  });

  it('without a token answers only requests addressed to a loopback host (no DNS rebinding)', async () => {
    const app = setup();
    expect((await app.request('http://127.0.0.1:4317/api/sessions', { headers: { Host: '127.0.0.1:4317' } })).status).toBe(200);
    expect((await app.request('http://evil.example:4317/api/sessions', { headers: { Host: 'evil.example:4317' } })).status).toBe(403);
  });

  it('sends the CSP and nosniff with every response, the page included', async () => {
    const app = setup();
    for (const path of ['/', '/app.css', '/api/sessions', '/api/sessions/ses_missing']) {
      const response = await app.request(path);
      expect(response.headers.get('content-security-policy')).toContain("default-src 'self'; script-src 'self'; style-src 'self'");
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    }
  });

  it('serves a page and script that never put data into innerHTML', async () => {
    const app = setup();
    const modules = readdirSync(new URL('./assets/', import.meta.url)).filter((name) => name.endsWith('.js'));
    expect(modules.length).toBeGreaterThan(1);
    let all = '';
    for (const name of modules) {
      const response = await app.request(`/${name}`);
      expect(response.headers.get('content-type')).toContain('text/javascript');
      all += await response.text();
    }
    expect(all).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write/);
    expect(all).toContain('textContent');
  });

  it('keeps every asset of the page under 400 lines, its script in native ES modules', async () => {
    for (const name of readdirSync(new URL('./assets/', import.meta.url))) {
      const text = readFileSync(new URL(`./assets/${name}`, import.meta.url), 'utf8');
      expect(text.split('\n').length, name).toBeLessThanOrEqual(400);
    }
    expect(await (await setup().request('/')).text()).toContain('<script type="module" src="/app.js"></script>');
  });

  it("gives a module's imports the page's token, so each module loads once and passes the guard", async () => {
    const app = setup('secret-token');
    const script = await (await app.request('/app.js?token=secret-token')).text();
    expect(script).toContain("from './dom.js?token=secret-token';");
    expect(script).not.toMatch(/from '\.\/[a-z-]+\.js';/);
    expect((await app.request('/dom.js?token=secret-token')).status).toBe(200);
  });
});
