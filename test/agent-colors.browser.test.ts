import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserSuite, launchTestBrowser, type TestBrowser } from './helpers/browser.ts';
import type { Cadre } from '../src/runtime/create-cadre.ts';
import { startDashboard, type Dashboard } from '../src/server/create-server.ts';
import { createTestCadre } from '../src/server/server-fixtures.ts';

const { skip, title } = browserSuite('agent colours in a real browser');

describe.skipIf(skip)(title, () => {
  let cadre: Cadre;
  let dashboard: Dashboard;
  let browser: TestBrowser;
  let context: BrowserContext;

  beforeAll(async () => {
    cadre = createTestCadre();
    dashboard = await startDashboard({ cadre, port: 0 });
    browser = await launchTestBrowser('cadre-agent-colors-');
    context = browser.context;
  });

  afterAll(async () => {
    for (const session of (await cadre?.store.listSessions()) ?? []) await cadre.stopSession(session.id);
    await browser?.close();
    await dashboard?.close();
    await cadre?.close();
  });

  it("shows a run's agent in the colour its file names, and agents without one in the page's colour", async () => {
    const page = await context.newPage();
    await page.goto(dashboard.url);
    await page.fill('#new-session textarea[name="prompt"]', 'Write a NOTE.');
    await page.click('#new-session button[type="submit"]');
    const writer = page.locator('.run-card', { hasText: 'write a note' }).locator('.run-head [data-field="agent"]');
    await expect.poll(() => writer.textContent(), { timeout: 10_000 }).toBe('writer');
    // `color: purple` in the writer's definition.
    expect(await writer.evaluate((node) => getComputedStyle(node).color)).toBe('rgb(142, 78, 198)');
    const plain = await page.locator('#new-session').evaluate((node) => getComputedStyle(node).color);
    expect(plain).not.toBe('rgb(142, 78, 198)');
  });
});
