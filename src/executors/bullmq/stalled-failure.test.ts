import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isStalledFailure } from './stalled-failure.ts';

describe('isStalledFailure', () => {
  it('knows the failed reason the installed BullMQ gives a job its stalled-job recovery gave up on, and nothing else', () => {
    // BullMQ says it only in a Lua script: read it there, so an upgrade that rewords it fails here.
    const scripts = join(dirname(createRequire(import.meta.url).resolve('bullmq')), 'scripts');
    const reasons = readdirSync(scripts)
      .filter((name) => name.startsWith('moveStalledJobsToWait'))
      .flatMap((name) => [...readFileSync(join(scripts, name), 'utf8').matchAll(/failedReason = "([^"]+)"/g)].map((match) => match[1]));
    expect(reasons.length).toBeGreaterThan(0);
    for (const reason of reasons) expect(isStalledFailure(reason)).toBe(true);
    expect(isStalledFailure('No cadre worker has the workspace /x')).toBe(false);
  });
});
