import type { PermissionsConfig } from '../permissions/permissions.ts';
import { z } from 'zod';
import { defineAgent } from '../agents/agent-definition.ts';
import type { Limits } from '../config/limits.ts';
import { createCadre, type Cadre } from '../runtime/create-cadre.ts';
import { defineTool } from '../tools/define-tool.ts';
import type { RunRecord } from '../store/records.ts';
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts';
import type { Store } from '../store/store.ts';
import { scriptedLanguageModel, type Script } from '../testing/index.ts';
import { eventually } from '../../test/helpers/eventually.ts';

/** The task of the slow background run that {@link dashboardScript} starts for a prompt with `SLOW`. */
export const slowTask = 'Slow work';

const quickCall = { name: 'agent', arguments: { agent: 'general', task: 'Quick work', description: 'quick answer', run_in_background: true } };
const noteCall = { name: 'agent', arguments: { agent: 'writer', task: 'Write the note', description: 'write a note', run_in_background: true } };
const slowCall = { name: 'agent', arguments: { agent: 'general', task: slowTask, description: 'slow survey', run_in_background: true } };

/** The task of the background run that {@link dashboardScript} starts for a prompt with `STREAM`. */
export const streamTask = 'Write the long answer';
/** What that run's subagent says in its first step, before it calls `check_status`. */
export const streamFirstWords = 'First I check the status of the build.';
const streamCall = { name: 'agent', arguments: { agent: 'general', task: streamTask, description: 'long answer', run_in_background: true } };

/**
 * A primary agent that starts background runs on `general`: a slow one (a subagent turn that
 * waits `slowDelayMs`) when the prompt says `SLOW`, a quick and a slow one when it says `BOTH`,
 * one whose subagent streams two steps a few characters every `streamDelayMs` (the second step
 * three times as fast) when it says `STREAM`, else a
 * quick one. Notifications get a short reply.
 */
export function dashboardScript({ slowDelayMs = 20_000, streamDelayMs = 250 } = {}): Script {
  return [
    {
      when: { system_includes: 'Note writer' },
      turns: [{ tool_calls: [{ name: 'note', arguments: { path: 'docs/notes.md', text: 'hello' } }] }, { text: 'Wrote the note.' }],
    },
    { when: { system_includes: 'general-purpose', user_includes: slowTask }, turns: [{ text: 'Slow result.', delay_ms: slowDelayMs }] },
    // Streams slowly: a first step that says something and checks, then a long final answer.
    {
      when: { system_includes: 'general-purpose', user_includes: streamTask },
      turns: [
        { text: streamFirstWords, tool_calls: [{ name: 'check_status', arguments: {} }], chunk_size: 4, chunk_delay_ms: streamDelayMs },
        {
          text: `The build is green. ${'Every part of the answer arrives a few words at a time. '.repeat(8)}Done.`,
          chunk_size: 12,
          chunk_delay_ms: Math.round(streamDelayMs / 3),
        },
      ],
    },
    { when: { system_includes: 'general-purpose' }, turns: [{ text: 'Quick result: the answer is 42.' }] },
    { when: { last_user_includes: '<subagent-notification>' }, turns: [{ text: 'Noted the subagent result.' }] },
    { when: { user_includes: 'SLOW' }, turns: [{ tool_calls: [slowCall] }, { text: 'Started the slow survey.' }] },
    { when: { user_includes: 'NOTE' }, turns: [{ tool_calls: [noteCall] }, { text: 'Started the writer.' }] },
    { when: { user_includes: 'BOTH' }, turns: [{ tool_calls: [quickCall, slowCall] }, { text: 'Started both.' }] },
    { when: { user_includes: 'STREAM' }, turns: [{ tool_calls: [streamCall] }, { text: 'Started the long answer.' }] },
    { turns: [{ tool_calls: [quickCall] }, { text: 'Started the quick answer.' }] },
  ];
}

/**
 * A cadre runtime on an in-memory store (or `store`), answering from {@link dashboardScript}, whose asks wait
 * for an answer (as `cadre serve` does). A prompt with `NOTE` starts the `writer`, whose `note`
 * tool (risk `write`) asks, with a diff; each note it is allowed to write is added to `notes`.
 */
export function createTestCadre(
  options: { slowDelayMs?: number; streamDelayMs?: number; notes?: string[]; limits?: Partial<Limits>; store?: Store; permissions?: PermissionsConfig } = {},
): Cadre {
  const notes = options.notes ?? [];
  const note = defineTool({
    name: 'note',
    description: 'Writes a note',
    risk: 'write',
    inputSchema: z.object({ path: z.string(), text: z.string() }),
    argument: ({ path }) => path,
    // What its ask shows: a new file holding the note.
    preview: ({ path, text }) => ({ kind: 'diff', path, diff: `--- /dev/null\n+++ b/${path}\n@@ -0,0 +1 @@\n+${text}` }),
    execute: ({ path, text }) => {
      notes.push(`${path}: ${text}`);
      return `wrote ${path}`;
    },
  });
  const checkStatus = defineTool({ name: 'check_status', description: 'Says how the build is', inputSchema: z.object({}), execute: () => 'green' });
  return createCadre({
    store: options.store ?? createSqliteStore({ path: ':memory:' }),
    model: scriptedLanguageModel(dashboardScript(options)),
    agents: [defineAgent({ name: 'writer', description: 'Writes notes', system: 'Note writer.', tools: ['note'], mode: 'subagent', color: 'purple' })],
    tools: { note, check_status: checkStatus },
    approvals: 'wait',
    limits: options.limits,
    permissions: options.permissions,
    onError: (error) => console.error(error),
  });
}

/** Polls the store until a run of the session matches, or fails after `timeoutMs`. */
export async function waitForRun(cadre: Cadre, sessionId: string, matches: (run: RunRecord) => boolean, timeoutMs = 5_000): Promise<RunRecord> {
  return eventually(async () => (await cadre.store.listRuns({ parent_session_id: sessionId })).find(matches), {
    timeout: timeoutMs,
    interval: 20,
    what: `a matching run of session ${sessionId}`,
  });
}
