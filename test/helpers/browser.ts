import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

/** Where Debian's `chromium` package puts the browser the browser tests drive. */
export const chromiumPath = '/usr/bin/chromium';

/**
 * Whether a browser test suite skips, and its title saying why: only outside CI, where a missing
 * browser must fail the suite rather than skip it.
 * @example const { skip, title } = browserSuite('the dashboard in a real browser'); describe.skipIf(skip)(title, ...)
 */
export function browserSuite(name: string): { skip: boolean; title: string } {
  const skip = !existsSync(chromiumPath) && process.env.CI !== 'true';
  return { skip, title: skip ? `${name} (skipped: ${chromiumPath} not found; apt-get install chromium)` : name };
}

/** A headless Chromium on a throwaway profile; `close` ends it and removes the profile. */
export interface TestBrowser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** Launches {@link TestBrowser} with a profile in a new temporary folder named after `prefix`. */
export async function launchTestBrowser(prefix: string, options: { viewport?: { width: number; height: number } } = {}): Promise<TestBrowser> {
  const profile = await mkdtemp(join(tmpdir(), prefix));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    ...options,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return {
    context,
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}
