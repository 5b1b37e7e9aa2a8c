import { z } from 'zod';
import { defineAgent, type AgentDefinition } from '../src/agents/agent-definition.ts';
import type { Cadre } from '../src/runtime/cadre.ts';
import { defineTool } from '../src/tools/define-tool.ts';
import { workerMarker } from './bench-model.ts';

/** The trivial workspace tool every worker step calls. */
export const noopTool = defineTool({
  name: 'noop',
  description: 'Does nothing and answers ok.',
  inputSchema: z.object({}),
  execute: () => 'ok',
});

/** The worker's system prompt; it carries the marker the bench model keys on. */
export const workerSystem = `${workerMarker}: you check one part of the work with the noop tool and report what you found.`;

/** The subagent both benchmarks delegate to. */
export const workerAgent: AgentDefinition = defineAgent({
  name: 'worker',
  description: 'Checks one part of the work and reports.',
  system: workerSystem,
  tools: ['noop'],
  mode: 'subagent',
});

/** Collects errors cadre reports through `onError`; a benchmark that saw any is not valid. */
export function createErrorSink(): { report: (error: unknown) => void; check: (what: string) => void } {
  const errors: unknown[] = [];
  return {
    report: (error) => errors.push(error),
    check(what) {
      if (errors.length > 0) throw new Error(`${what}: cadre reported ${errors.length} error(s); the first: ${String(errors[0])}`, { cause: errors[0] });
    },
  };
}

/**
 * One fan-out round: the parent's turn delegates (as the bench model scripts it), every run ends,
 * and everything the round wrote is committed before it returns. Throws when the turn did not
 * complete or cadre reported an error (`what` names the case).
 * @returns the parent's session id.
 */
export async function fanOutRound(
  cadre: Pick<Cadre, 'createSession' | 'send' | 'waitForIdle' | 'store'>,
  errors: ReturnType<typeof createErrorSink>,
  what: string,
): Promise<string> {
  const session = await cadre.createSession();
  const turn = await cadre.send(session.id, 'Fan out the work.');
  if (turn.status !== 'completed') throw new Error(`${what}: the parent turn ended ${turn.status}: ${String(turn.error ?? '')}`);
  await cadre.waitForIdle(session.id);
  // Part of the round: everything it wrote is committed before the clock stops.
  await cadre.store.flush();
  errors.check(what);
  return session.id;
}
