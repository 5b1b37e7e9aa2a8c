/**
 * The example app of examples/own-loop, as a person uses it in Chromium: its page is built once
 * with Vite, its server runs as its own process against the scripted model, exactly as
 * `npm run example:own-loop` starts it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { BrowserContext } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserSuite, launchTestBrowser, type TestBrowser } from './helpers/browser.ts';

const example = join(import.meta.dirname, '..', 'examples', 'own-loop');
const { skip, title } = browserSuite('the own-loop example in a real browser');

describe.skipIf(skip)(title, () => {
  let server: ChildProcess;
  let url: string;
  let browser: TestBrowser;
  let context: BrowserContext;

  beforeAll(async () => {
    await build({ configFile: join(example, 'vite.config.ts'), logLevel: 'error' });
    server = spawn(process.execPath, ['--import', join(example, 'dev', 'use-cadre-source.ts'), join(example, 'server.ts')], {
      cwd: example,
      env: { ...process.env, PORT: '0', CADRE_MODEL: '' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    url = await new Promise<string>((resolve, reject) => {
      createInterface({ input: server.stdout! }).once('line', resolve);
      server.once('exit', (code) => reject(new Error(`the example server exited with ${code}`)));
    });
    browser = await launchTestBrowser('cadre-own-loop-browser-');
    context = browser.context;
  });

  afterAll(async () => {
    await browser?.close();
    if (server && server.exitCode === null) {
      server.kill('SIGTERM');
      await new Promise((resolve) => server.once('exit', resolve));
    }
  });

  it('serves its icon: /favicon.ico is no 404', async () => {
    const response = await fetch(new URL('/favicon.ico', url));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
  });

  it('sends a message, shows live run cards that go from queued to completed, approves an ask, comes back after a reload and stops one', async () => {
    const page = await context.newPage();
    const pageErrors: string[] = [];
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await page.goto(url);
    await page.fill('input[name="prompt"]', 'Check the project and deploy it to staging.');
    await page.click('button[type="submit"]');

    const card = (description: string) => page.locator('.run-card', { hasText: description });
    const list = card('list the files');
    const deploy = card('deploy to staging');
    const slow = card('slow survey');

    // The deployer's call asks; the card shows the ask, and Approve answers it.
    await expect.poll(() => deploy.locator('.approval').textContent(), { timeout: 20_000 }).toContain('Allow deploy');
    await deploy.locator('[data-action="approve"]').click();
    await expect.poll(() => deploy.getAttribute('data-status'), { timeout: 20_000 }).toBe('completed');
    await expect.poll(() => list.getAttribute('data-status'), { timeout: 20_000 }).toBe('completed');
    for (const done of [list, deploy]) {
      const trail = (await done.getAttribute('data-trail'))!.split(' ');
      expect(trail[0]).toBe('queued');
      expect(trail.at(-1)).toBe('completed');
    }
    // The slow one waited for a slot (two at a time), then works until a person stops it.
    await expect.poll(() => slow.getAttribute('data-status'), { timeout: 20_000 }).toBe('running');
    expect((await slow.getAttribute('data-trail'))!.split(' ')[0]).toBe('queued');

    // A reload comes back to the same chat (its id is in the address): every card as it stands.
    await page.reload();
    await expect.poll(() => page.locator('.run-card').count(), { timeout: 20_000 }).toBe(3);
    expect([await list.getAttribute('data-status'), await deploy.getAttribute('data-status'), await slow.getAttribute('data-status')]).toEqual([
      'completed',
      'completed',
      'running',
    ]);
    expect(await slow.locator('.activity').textContent()).toBe('waiting for model');

    await slow.locator('[data-action="stop"]').click();
    await expect.poll(() => slow.getAttribute('data-status'), { timeout: 20_000 }).toBe('canceled_by_user');
    expect(await slow.locator('[data-action="stop"]').count()).toBe(0);

    // The runs' notifications, never acknowledged by the page that went away, reach the model with the next message.
    await expect.poll(() => page.locator('button[type="submit"]').isEnabled(), { timeout: 20_000 }).toBe(true);
    await page.fill('input[name="prompt"]', 'What happened?');
    await page.click('button[type="submit"]');
    await expect.poll(() => page.locator('.message.assistant').last().textContent(), { timeout: 20_000 }).toContain('Your subagents are done (');
    // One message per answer: the resumed cards, then the answer, which repeats no finished card.
    expect(await page.locator('.message.assistant').count()).toBe(2);
    expect(await page.locator('.message.assistant').last().locator('.run-card').count()).toBe(0);
    const answer = (await page.locator('.message.assistant').last().textContent())!;
    expect(answer).toContain('completed');
    expect(answer).toContain('canceled_by_user');
    await page.screenshot({ path: join(tmpdir(), `cadre-own-loop-${process.pid}.png`), fullPage: true });
    expect(pageErrors).toEqual([]);
  });
});
