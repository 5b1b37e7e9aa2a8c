import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserSuite, launchTestBrowser, type TestBrowser } from './helpers/browser.ts';
import type { Cadre } from '../src/runtime/create-cadre.ts';
import { startDashboard, type Dashboard } from '../src/server/create-server.ts';
import { createTestCadre } from '../src/server/server-fixtures.ts';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.ts';

const { skip, title } = browserSuite('the dashboard as a new user meets it: phones, asks, other processes, the address');

/** Whether an element lies wholly inside the window as the page stands (no scrolling done by the test). */
async function inView(page: Page, selector: string): Promise<boolean> {
  return page
    .locator(selector)
    .first()
    .evaluate((node) => {
      const box = node.getBoundingClientRect();
      return box.height > 0 && box.top >= 0 && box.bottom <= window.innerHeight;
    });
}

describe.skipIf(skip)(title, () => {
  let folder: string;
  let cadre: Cadre;
  let dashboard: Dashboard;
  let browser: TestBrowser;
  let context: BrowserContext;

  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'cadre-dashboard-layout-'));
    cadre = createTestCadre({ store: createSqliteStore({ path: join(folder, 'cadre.db') }) });
    dashboard = await startDashboard({ cadre, port: 0 });
    browser = await launchTestBrowser('cadre-dashboard-layout-');
    context = browser.context;
  });

  afterAll(async () => {
    for (const session of (await cadre?.store.listSessions()) ?? []) await cadre.stopSession(session.id);
    await browser?.close();
    await dashboard?.close();
    await cadre?.close();
    await cadre?.store.close();
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  async function finishedSessions(count: number): Promise<string[]> {
    const ids: string[] = [];
    for (let index = 0; index < count; index++) {
      const session = await cadre.createSession();
      await cadre.send(session.id, `Find answer ${index}.`);
      await cadre.waitForIdle(session.id);
      ids.push(session.id);
    }
    return ids;
  }

  it('opens a tapped session in view on a 390 px phone, below a long list', async () => {
    const ids = await finishedSessions(10);
    // The newest session heads the list, ten rows above where the session opens.
    const first = ids.at(-1)!;
    const page = await context.newPage();
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(dashboard.url);
    const item = page.locator('.session-item', { hasText: first });
    await expect.poll(() => item.count(), { timeout: 10_000 }).toBe(1);
    await item.click();
    await expect.poll(() => page.locator('#session-id').textContent(), { timeout: 10_000 }).toBe(first);
    // Scrolled to the session itself, once its conversation and runs were filled in.
    await expect.poll(() => inView(page, '#session-title'), { timeout: 10_000 }).toBe(true);
    // At the top of the screen (a list row refreshed above it may still shift it by a row), not a screen down.
    await expect
      .poll(() => page.locator('#session-view').evaluate((node) => Math.abs(Math.round(node.getBoundingClientRect().top))), { timeout: 10_000 })
      .toBeLessThan(120);
    await page.close();
  });

  it('shows a pending ask without scrolling at 1280x800, in a session that has run work before', async () => {
    // Four notes written before, each a run of the writer whose ask was approved.
    const session = await cadre.createSession();
    for (let turn = 0; turn < 4; turn++) {
      const sent = cadre.send(session.id, turn === 0 ? 'Write a NOTE about the project.' : 'Another one.');
      await expect.poll(async () => (await cadre.store.listApprovals({ statuses: ['pending'], session_id: session.id })).length, { timeout: 10_000 }).toBe(1);
      const [ask] = await cadre.store.listApprovals({ statuses: ['pending'], session_id: session.id });
      await cadre.approve(ask.id, { decision: 'approve' });
      await sent;
      await cadre.waitForIdle(session.id);
    }
    const page = await context.newPage();
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto(`${dashboard.url}#${session.id}`);
    await expect.poll(() => page.locator('.run-card').count(), { timeout: 10_000 }).toBe(4);
    await expect.poll(() => page.locator('body').getAttribute('data-events'), { timeout: 10_000 }).toBe('open');
    const last = cadre.send(session.id, 'And one more.');
    const card = page.locator('.approval-card');
    await expect.poll(() => card.count(), { timeout: 10_000 }).toBe(1);
    expect(await page.evaluate(() => window.scrollY)).toBe(0);
    expect(await inView(page, '.approval-card')).toBe(true);
    await card.locator('[data-action="deny"]').click();
    await expect.poll(() => card.count(), { timeout: 10_000 }).toBe(0);
    await last;
    await page.close();
  });

  it('lists a session another process started, without a click or a reload', async () => {
    const page = await context.newPage();
    await page.goto(dashboard.url);
    await expect.poll(() => page.locator('body').getAttribute('data-events'), { timeout: 10_000 }).toBe('open');
    // Another process on the same database, as `cadre run` in another terminal.
    const storeModule = fileURLToPath(new URL('../src/store/sqlite/sqlite-store.ts', import.meta.url));
    const id = `ses_fromanotherprocess${process.pid}`;
    const writer = `
      const { createSqliteStore } = await import(${JSON.stringify(storeModule)});
      const store = createSqliteStore({ path: ${JSON.stringify(join(folder, 'cadre.db'))} });
      const at = new Date().toISOString();
      await store.createSession({ id: ${JSON.stringify(id)}, agent: 'main', model: 'scripted', created_at: at, status: 'idle', parent_run_id: null, auto_resumes: 0, user_canceled_at: null });
      await store.appendMessages([{ session_id: ${JSON.stringify(id)}, role: 'user', content: 'Started in another terminal.', created_at: at }]);
      await store.close();`;
    const child = spawn(process.execPath, ['--input-type=module', '--eval', writer], { stdio: 'ignore' });
    expect(await new Promise((resolve) => child.on('exit', resolve))).toBe(0);
    const written = Date.now();
    // The list also reloads every 10 s; the change must show well before that.
    await expect.poll(() => page.locator('#session-rows').textContent(), { timeout: 5_000 }).toContain('Started in another terminal.');
    expect(Date.now() - written).toBeLessThan(3_000);
    await page.close();
  });

  it('opens the session named by a new #ses_... in the address', async () => {
    const [first, second] = await finishedSessions(2);
    const page = await context.newPage();
    await page.goto(`${dashboard.url}#${first}`);
    await expect.poll(() => page.locator('#session-id').textContent(), { timeout: 10_000 }).toBe(first);
    await page.evaluate((id) => {
      location.hash = `#${id}`;
    }, second);
    await expect.poll(() => page.locator('#session-id').textContent(), { timeout: 10_000 }).toBe(second);
    await expect.poll(() => page.locator('#session-title').textContent()).toBe('Find answer 1.');
    await page.goBack();
    await expect.poll(() => page.locator('#session-id').textContent(), { timeout: 10_000 }).toBe(first);
    await page.close();
  });
});
