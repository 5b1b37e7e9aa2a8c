import { describe, expect, it } from 'vitest';
import { AgentRegistry } from '../agents/agent-registry.ts';
import { defaultModelAliases } from '../config/model-aliases.ts';
import type { CadreConfig } from '../config/load-config.ts';
import { createSandbox } from '../tools/sandbox/create-sandbox.ts';
import type { CliContext } from './cli-context.ts';
import { warnAtStart } from './start-warnings.ts';

describe('warnAtStart', () => {
  it("says an agent file's unknown key and a missing sandbox once per process, however often the configuration loads", async () => {
    let stderr = '';
    const context = { stderr: { write: (text: string) => ((stderr += text), true) } } as unknown as CliContext;
    const agents = new AgentRegistry([{ name: 'helper', description: 'helps', system: 'Help.', mode: 'all', source: '/project/.cadre/agents/warn-once-helper.md', warnings: ['colour: not a cadre key; kept, not used'] }]);
    const missing = async () => ({ available: false as const, reason: 'bubblewrap (bwrap) is not installed' });
    const runtime = () => ({
      agents,
      toolNames: ['read_file'],
      config: { modelAliases: defaultModelAliases } as CadreConfig,
      sandbox: createSandbox({ root: '/project', detect: missing }),
    });
    await warnAtStart(context, runtime());
    await warnAtStart(context, runtime());
    expect(stderr.split('\n').filter(Boolean)).toEqual([
      'cadre: warning: /project/.cadre/agents/warn-once-helper.md: colour: not a cadre key; kept, not used',
      'cadre: warning: no OS sandbox here (bubblewrap (bwrap) is not installed): bash commands run unconfined; set "sandbox": {"mode": "required"} in cadre.config.json to refuse them, or "off" to silence this',
    ]);
  });
});
