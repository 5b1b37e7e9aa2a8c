import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserSuite, launchTestBrowser, type TestBrowser } from './helpers/browser.ts';
import type { Cadre } from '../src/runtime/create-cadre.ts';
import { startDashboard, type Dashboard } from '../src/server/create-server.ts';
import { createTestCadre, streamFirstWords, waitForRun } from '../src/server/server-fixtures.ts';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { runFixture } from '../src/store/store-fixtures.ts';

// The README's picture is refreshed with CADRE_UPDATE_SCREENSHOT=1; otherwise the test's own copy goes to a temp dir.
const screenshotPath =
  process.env.CADRE_UPDATE_SCREENSHOT === '1'
    ? fileURLToPath(new URL('../docs/images/dashboard.png', import.meta.url))
    : join(tmpdir(), `cadre-dashboard-${process.pid}.png`);
const { skip, title } = browserSuite('the dashboard in a real browser');

describe.skipIf(skip)(title, () => {
  let cadre: Cadre;
  let dashboard: Dashboard;
  let browser: TestBrowser;
  let context: BrowserContext;

  beforeAll(async () => {
    cadre = createTestCadre({ slowDelayMs: 20_000 });
    dashboard = await startDashboard({ cadre, port: 0 });
    browser = await launchTestBrowser('cadre-dashboard-browser-', { viewport: { width: 1440, height: 900 } });
    context = browser.context;
  });

  afterAll(async () => {
    for (const session of (await cadre?.store.listSessions()) ?? []) await cadre.stopSession(session.id);
    await browser?.close();
    await dashboard?.close();
    await cadre?.close();
  });

  it('starts a session from the form, shows its runs live, and stops one as canceled_by_user', async () => {
    const earlier = await cadre.createSession();
    await cadre.send(earlier.id, 'Find the answer.');
    await cadre.waitForIdle(earlier.id);
    const page = await context.newPage();
    const pageErrors: string[] = [];
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await page.goto(dashboard.url);
    await expect.poll(() => page.locator('#session-rows').textContent(), { timeout: 10_000 }).toContain(earlier.id);

    await page.fill('#new-session textarea[name="prompt"]', 'Survey BOTH parts of the project and report back.');
    await page.click('#new-session button[type="submit"]');

    const slowCard = page.locator('.run-card', { hasText: 'slow survey' });
    const quickCard = page.locator('.run-card', { hasText: 'quick answer' });
    await expect.poll(() => slowCard.getAttribute('data-status'), { timeout: 10_000 }).toBe('running');
    await expect.poll(() => quickCard.getAttribute('data-status'), { timeout: 10_000 }).toBe('completed');
    await expect.poll(() => slowCard.locator('[data-field="activity"]').textContent()).not.toBe('');
    // The notification of the quick run wakes the parent up; its reply can only arrive live.
    await expect.poll(() => page.locator('#messages').textContent(), { timeout: 10_000 }).toContain('Noted the subagent result.');
    const sessionId = (await page.locator('#session-id').textContent())!;
    const slowRun = await waitForRun(cadre, sessionId, (run) => run.description === 'slow survey');
    expect(slowRun.status).toBe('running');
    expect(await quickCard.locator('[data-action="stop"]').isHidden()).toBe(true);
    // Frequent live events carry the record as the run started: a late one never takes a finished card back.
    const quickRunId = await quickCard.getAttribute('data-run-id');
    // The page's modules, as its own script loaded them (same address, same instances).
    await page.evaluate(`Promise.all([import('/runs.js'), import('/state.js')]).then(([{ applyRunEvent }, { state }]) =>
      applyRunEvent({ ...state.runs.get(${JSON.stringify(quickRunId)}), status: 'running' }, { type: 'activity', data: { text: 'late' } }))`);
    expect(await quickCard.getAttribute('data-status')).toBe('completed');
    expect(await quickCard.locator('[data-field="activity"]').textContent()).not.toBe('late');

    await slowCard.locator('[data-action="stop"]').click();
    await expect.poll(() => slowCard.locator('[data-field="status"]').textContent(), { timeout: 10_000 }).toBe('canceled_by_user');
    expect(await slowCard.locator('[data-action="stop"]').isHidden()).toBe(true);
    expect((await cadre.store.getRun(slowRun.id))?.status).toBe('canceled_by_user');

    await quickCard.locator('[data-action="details"]').click();
    await expect.poll(() => quickCard.locator('[data-field="details"]').textContent()).toContain('run-end');
    expect(await quickCard.locator('[data-field="details"]').textContent()).toContain('Quick result: the answer is 42.');
    await cadre.waitForIdle(sessionId);
    await expect.poll(() => page.locator('#session-state').textContent()).toBe('idle');
    expect(pageErrors).toEqual([]);

    await mkdir(join(screenshotPath, '..'), { recursive: true });
    await page.screenshot({ path: screenshotPath, fullPage: true });
    await page.close();
  });

  it("shows what a subagent writes on its run's card as it streams, and its messages in the open details before the run ends", async () => {
    const session = await cadre.createSession();
    const page = await context.newPage();
    const pageErrors: string[] = [];
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await page.goto(`${dashboard.url}#${session.id}`);
    // Connected first, so the subagent streams to a watcher from its first word.
    await expect.poll(() => page.locator('body').getAttribute('data-events'), { timeout: 10_000 }).toBe('open');
    await cadre.send(session.id, 'STREAM the long answer.');

    const card = page.locator('.run-card', { hasText: 'long answer' });
    const live = card.locator('[data-field="live"]');
    await expect.poll(() => card.count(), { timeout: 10_000 }).toBe(1);
    await card.locator('[data-action="details"]').click();
    const transcript = card.locator('[data-field="transcript"]');
    await expect.poll(() => transcript.textContent()).toContain('Write the long answer');
    // Words of the first step, on the card while they arrive (2.5 s), before they are a stored message.
    await expect.poll(() => live.textContent(), { timeout: 10_000 }).toContain('First I');
    expect(await live.isVisible()).toBe(true);
    expect(await transcript.textContent()).not.toContain(streamFirstWords);
    // The first step's message joins the open transcript live, while the final answer still streams.
    await expect.poll(() => transcript.textContent(), { timeout: 10_000 }).toContain(streamFirstWords);
    expect(await card.getAttribute('data-status')).toBe('running');
    await expect.poll(() => live.textContent(), { timeout: 10_000 }).toContain('The build is green.');

    await expect.poll(() => card.getAttribute('data-status'), { timeout: 15_000 }).toBe('completed');
    expect(await live.isHidden()).toBe(true);
    await expect.poll(() => transcript.textContent()).toContain('a few words at a time. Done.');
    // The subagent's words stay on its card: the session's own transcript holds only its own messages.
    expect(await page.locator('#messages').textContent()).not.toContain(streamFirstWords);
    expect(pageErrors).toEqual([]);
    await cadre.waitForIdle(session.id);
    await page.close();
  });

  it('reads at a glance: sessions by title and real state, a live timeline, notifications as cards, no console errors', async () => {
    const session = await cadre.createSession();
    await cadre.send(session.id, 'Survey BOTH parts of the project and report back.');
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    await page.goto(`${dashboard.url}#${session.id}`);

    const item = page.locator('.session-item', { hasText: session.id });
    await expect.poll(() => item.locator('.session-name').textContent()).toBe('Survey BOTH parts of the project and report back.');
    // The quick run ends and its notification wakes the parent; the slow run still works.
    await expect.poll(() => page.locator('#session-state').textContent(), { timeout: 10_000 }).toBe('waiting on 1 run');
    await expect.poll(() => item.locator('.badge').textContent(), { timeout: 15_000 }).toBe('waiting on 1 run');
    expect(await page.locator('#session-title').textContent()).toBe('Survey BOTH parts of the project and report back.');

    const rows = page.locator('.timeline-row');
    await expect.poll(() => rows.count()).toBe(2);
    await expect.poll(() => page.locator('.timeline-row[data-status="completed"] .timeline-bar.completed').count()).toBe(1);
    expect(await page.locator('.timeline-row[data-status="running"] .timeline-bar.running').count()).toBe(1);
    // Live: while a run works, the timeline's span grows with the clock.
    const axis = page.locator('#timeline-axis');
    const before = await axis.textContent();
    await expect.poll(() => axis.textContent(), { timeout: 5_000 }).not.toBe(before);

    const notification = page.locator('.notification-card');
    await expect.poll(() => notification.count(), { timeout: 10_000 }).toBe(1);
    expect(await notification.textContent()).toContain('quick answer');
    expect(await notification.locator('.badge').textContent()).toBe('completed');
    expect(await notification.textContent()).toContain('Quick result: the answer is 42.');
    expect(await page.locator('#messages').textContent()).not.toContain('<subagent-notification>');

    if (process.env.CADRE_UPDATE_SCREENSHOT === '1') {
      await page.screenshot({ path: fileURLToPath(new URL('../docs/images/dashboard-desktop.png', import.meta.url)), fullPage: true });
    }
    const slowRun = await waitForRun(cadre, session.id, (run) => run.description === 'slow survey');
    await page.locator('.run-card', { hasText: 'slow survey' }).locator('[data-action="stop"]').click();
    await expect.poll(() => page.locator('.timeline-row[data-status="canceled_by_user"] .timeline-bar.canceled').count(), { timeout: 10_000 }).toBe(1);
    await expect.poll(() => page.locator('#session-state').textContent(), { timeout: 10_000 }).toBe('idle');
    expect((await cadre.store.getRun(slowRun.id))?.status).toBe('canceled_by_user');
    expect(problems).toEqual([]);
    await page.close();
  });

  it('fits a phone: nothing scrolls sideways and run cards read as text, not a letter per line', async () => {
    const session = await cadre.createSession();
    await cadre.send(session.id, 'Survey BOTH parts of the project and report back.');
    const page = await context.newPage();
    await page.setViewportSize({ width: 390, height: 844 });
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    await page.goto(`${dashboard.url}#${session.id}`);
    const slowCard = page.locator('.run-card', { hasText: 'slow survey' });
    await expect.poll(() => slowCard.getAttribute('data-status'), { timeout: 10_000 }).toBe('running');
    await expect.poll(() => page.locator('.notification-card').count(), { timeout: 10_000 }).toBe(1);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    const description = slowCard.locator('[data-field="description"]');
    const box = (await description.boundingBox())!;
    expect(box.width).toBeGreaterThan(60);
    expect(box.height).toBeLessThan(40);
    if (process.env.CADRE_UPDATE_SCREENSHOT === '1') {
      await page.screenshot({ path: fileURLToPath(new URL('../docs/images/dashboard-phone.png', import.meta.url)), fullPage: true });
    }
    await slowCard.locator('[data-action="stop"]').click();
    await expect.poll(() => slowCard.getAttribute('data-status'), { timeout: 10_000 }).toBe('canceled_by_user');
    expect(problems).toEqual([]);
    await page.close();
  });

  it("shows tokens against the budgets, and a run whose process died as 'running (owner gone)' with its time stopped", async () => {
    // The runtime's own store: cadre.store is a read-only view.
    const budgetedStore = createSqliteStore({ path: ':memory:' });
    const budgeted = createTestCadre({ limits: { maxTokensPerRun: 5000, maxTokensPerSession: 100_000 }, store: budgetedStore });
    const server = await startDashboard({ cadre: budgeted, port: 0 });
    try {
      const session = await budgeted.createSession();
      await budgeted.send(session.id, 'Find the answer.');
      await budgeted.waitForIdle(session.id);
      const started = new Date(Date.now() - 90_000).toISOString();
      const leaseEnded = new Date(Date.now() - 45_000).toISOString();
      const orphan = runFixture({
        id: 'run_orphan',
        parent_session_id: session.id,
        description: 'orphaned work',
        status: 'running',
        created_at: started,
        started_at: started,
        lease_owner: 'gone-host:1:x',
        lease_expires_at: leaseEnded,
      });
      await budgetedStore.insertRun(orphan, { run_id: orphan.id, at: started, type: 'run-queued', data: {} });
      const { total } = await budgeted.sessionTokens(session.id);

      const page = await context.newPage();
      const pageErrors: string[] = [];
      page.on('pageerror', (error) => pageErrors.push(error.message));
      // Counts the runs of the page's once-a-second ticker, which moves the elapsed time of active runs.
      await page.addInitScript(() => {
        const counted = window as unknown as { secondTicks: number };
        counted.secondTicks = 0;
        const setInterval = window.setInterval.bind(window);
        window.setInterval = ((handler: TimerHandler, timeout?: number, ...rest: unknown[]) => {
          if (typeof handler !== 'function' || timeout !== 1000) return setInterval(handler, timeout, ...rest);
          return setInterval((...args: unknown[]) => {
            (handler as (...args: unknown[]) => void)(...args);
            counted.secondTicks++;
          }, timeout);
        }) as typeof window.setInterval;
      });
      await page.goto(`${server.url}#${session.id}`);
      const orphanCard = page.locator('.run-card', { hasText: 'orphaned work' });
      await expect.poll(() => orphanCard.locator('[data-field="status"]').textContent(), { timeout: 10_000 }).toBe('running (owner gone)');
      expect(await orphanCard.locator('[data-field="elapsed"]').textContent()).toBe('45s');
      // After two more ticks of the ticker, the time of a run whose owner is gone has not moved.
      const ticks = await page.evaluate(() => (window as unknown as { secondTicks: number }).secondTicks);
      await page.waitForFunction((before) => (window as unknown as { secondTicks: number }).secondTicks >= before + 2, ticks, { timeout: 10_000 });
      expect(await orphanCard.locator('[data-field="elapsed"]').textContent()).toBe('45s');
      const quickCard = page.locator('.run-card', { hasText: 'quick answer' });
      expect(await quickCard.locator('[data-field="usage"]').textContent()).toMatch(/^\d+ in \/ \d+ out tokens \(\d+ of 5000\)$/);
      expect(await page.locator('#session-tokens').textContent()).toBe(`${total} of 100000 tokens`);
      expect(pageErrors).toEqual([]);
      await page.close();
    } finally {
      await budgeted.stopSession((await budgeted.store.listSessions())[0].id);
      await server.close();
      await budgeted.close();
    }
  });

  it('shows an ask as a card with Approve, Deny and Always, and the run goes on once a person approves', async () => {
    const page = await context.newPage();
    const pageErrors: string[] = [];
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await page.goto(dashboard.url);
    await page.fill('#new-session textarea[name="prompt"]', 'Write a NOTE about the project.');
    await page.click('#new-session button[type="submit"]');
    const card = page.locator('.approval-card');
    await expect.poll(() => card.count(), { timeout: 10_000 }).toBe(1);
    expect(await card.locator('[data-field="summary"]').textContent()).toBe('note docs/notes.md');
    // What the call would do, under its summary: the diff, its lines marked.
    expect(await card.locator('.approval-preview').textContent()).toBe('--- /dev/null\n+++ b/docs/notes.md\n@@ -0,0 +1 @@\n+hello\n');
    expect(await card.locator('.approval-preview .diff-add').allTextContents()).toEqual(['+hello\n']);
    expect(await card.locator('[data-field="agent"]').textContent()).toBe('writer');
    expect(await card.locator('button').allTextContents()).toEqual(['Approve', 'Deny', 'Always']);
    const runCard = page.locator('.run-card', { hasText: 'write a note' });
    // The ask sits at the top of the session, naming its run, and the session reads as awaiting approval.
    expect(await page.locator('#approvals .approval-card').count()).toBe(1);
    expect(await card.locator('[data-field="run"]').textContent()).toBe(await runCard.getAttribute('data-run-id'));
    await expect.poll(() => page.locator('#session-state').textContent()).toBe('awaiting approval');
    await expect.poll(() => runCard.locator('[data-field="activity"]').textContent(), { timeout: 10_000 }).toBe('awaiting approval: note docs/notes.md');
    await card.locator('[data-action="approve"]').click();
    await expect.poll(() => card.count()).toBe(0);
    await expect.poll(() => runCard.getAttribute('data-status'), { timeout: 10_000 }).toBe('completed');
    const sessionId = (await page.locator('#session-id').textContent())!;
    const [approval] = await cadre.store.listApprovals({ session_id: sessionId });
    expect(approval).toMatchObject({ status: 'approved', resolved_by: 'person' });
    expect(await page.locator('#approvals').isHidden()).toBe(true);
    expect(pageErrors).toEqual([]);
    await page.close();
  });

  it('carries the access token from the page address into its assets, API calls and event stream', async () => {
    const guarded = await startDashboard({ cadre, port: 0, token: 'browser-test-token' });
    try {
      const page = await context.newPage();
      const pageErrors: string[] = [];
      page.on('pageerror', (error) => pageErrors.push(error.message));
      const refused = await page.goto(guarded.url.replace(/\?token=.*$/, ''));
      expect(refused?.status()).toBe(401);
      await page.goto(guarded.url);
      expect(await page.locator('.top').evaluate((node) => getComputedStyle(node).display)).toBe('flex');
      await page.fill('#new-session textarea[name="prompt"]', 'Find the answer with a token.');
      await page.click('#new-session button[type="submit"]');
      await expect.poll(() => page.locator('.run-card').first().getAttribute('data-status'), { timeout: 10_000 }).toBe('completed');
      await expect.poll(() => page.locator('#messages').textContent(), { timeout: 10_000 }).toContain('Noted the subagent result.');
      expect(await page.locator('#export-json').getAttribute('href')).toContain('token=browser-test-token');
      expect(pageErrors).toEqual([]);
      await page.close();
    } finally {
      await guarded.close();
    }
  });

  it('shows at once what another process wrote to the open session, with no live event of its own', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'cadre-dashboard-file-'));
    const path = join(folder, 'cadre.db');
    const fileCadre = createTestCadre({ store: createSqliteStore({ path }) });
    const fileDashboard = await startDashboard({ cadre: fileCadre, port: 0 });
    try {
      const session = await fileCadre.createSession();
      await fileCadre.store.flush();
      const page = await context.newPage();
      await page.goto(`${fileDashboard.url}#${session.id}`);
      await expect.poll(() => page.locator('#session-state').textContent()).toBe('idle');
      await expect.poll(() => page.locator('body').getAttribute('data-events'), { timeout: 10_000 }).toBe('open');
      // Another process on the same database, as `cadre run` in another terminal.
      const storeModule = fileURLToPath(new URL('../src/store/sqlite/sqlite-store.ts', import.meta.url));
      const writer = `
        const { createSqliteStore } = await import(${JSON.stringify(storeModule)});
        const store = createSqliteStore({ path: ${JSON.stringify(path)} });
        await store.appendMessages([{ session_id: ${JSON.stringify(session.id)}, role: 'user', content: 'Written from another terminal.', created_at: new Date().toISOString() }]);
        await store.close();`;
      const child = spawn(process.execPath, ['--input-type=module', '--eval', writer], { stdio: 'ignore' });
      expect(await new Promise((resolve) => child.on('exit', resolve))).toBe(0);
      const written = Date.now();
      // An idle session is read again only when the server sees another process's commit.
      await expect.poll(() => page.locator('#messages').textContent(), { timeout: 5_000 }).toContain('Written from another terminal.');
      expect(Date.now() - written).toBeLessThan(2_000);
      await page.close();
    } finally {
      await fileDashboard.close();
      await fileCadre.close();
      await fileCadre.store.close();
      await rm(folder, { recursive: true, force: true });
    }
  });
});
