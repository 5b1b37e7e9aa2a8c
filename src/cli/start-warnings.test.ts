import { describe, expect, it } from 'vitest';
import { createSandbox } from '../tools/sandbox/create-sandbox.ts';
import type { CliContext } from './cli-context.ts';
import { warnAtStart } from './start-warnings.ts';

describe('warnAtStart', () => {
  it("says an agent file's problem and a missing sandbox once per process, however often the configuration loads", async () => {
    let stderr = '';
    const context = { stderr: { write: (text: string) => ((stderr += text), true) } } as unknown as CliContext;
    const missing = async () => ({ available: false as const, reason: 'bubblewrap (bwrap) is not installed' });
    const problem = '/project/.cadre/agents/warn-once-helper.md: colour: not a cadre key; kept, not used';
    await warnAtStart(context, [problem], createSandbox({ root: '/project', detect: missing }));
    await warnAtStart(context, [problem], createSandbox({ root: '/project', detect: missing }));
    expect(stderr.split('\n').filter(Boolean)).toEqual([
      `cadre: warning: ${problem}`,
      'cadre: warning: no OS sandbox here (bubblewrap (bwrap) is not installed): bash commands run unconfined; set "sandbox": {"mode": "required"} in cadre.config.json to refuse them, or "off" to silence this',
    ]);
  });
});
