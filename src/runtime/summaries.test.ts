import { afterEach, describe, expect, it } from 'vitest';
import { createSqliteStore } from '../store/sqlite/sqlite-store.ts';
import { scriptedLanguageModel, type ScriptedTurn } from '../testing/index.ts';
import type { Limits } from '../config/limits.ts';
import { exportSession } from '../export/export-session.ts';
import { renderMarkdownExport } from '../export/render-markdown-export.ts';
import { createCadre, type Cadre, type CadreOptions } from './create-cadre.ts';
import { toolOutputs } from './runtime-fixtures.ts';

const open: Cadre[] = [];
afterEach(async () => {
  for (const cadre of open.splice(0)) await cadre.close();
});

const longResult = Array.from({ length: 300 }, (_, index) => `Finding ${index}: the store keeps run ${index} in a row.`).join(' ');

/** A parent that delegates once in the foreground, then reads its run with the given agent_output inputs. */
function makeCadre({
  summarizer,
  reads = [],
  limits = {},
  ...rest
}: { summarizer: (request: { system: string }) => ScriptedTurn; reads?: Array<Record<string, unknown>>; limits?: Partial<Limits> } & Partial<CadreOptions>) {
  let runId = '';
  const cadre = createCadre({
    store: createSqliteStore({ path: ':memory:' }),
    maxRetries: 0,
    limits: { maxResultChars: 2000, ...limits },
    onError: (error) => {
      throw error;
    },
    model: scriptedLanguageModel((request) => {
      if (request.system.includes('You condense')) return summarizer(request);
      if (request.system.includes('general-purpose')) return { text: longResult, usage: { input_tokens: 10, output_tokens: 1000 } };
      if (request.turn === 0) return { tool_calls: [{ name: 'agent', arguments: { agent: 'general', task: 'Survey the store' } }] };
      runId ||= /run_id: (run_\w+)/.exec(JSON.stringify(request.messages.at(-1)?.content))?.[1] ?? '';
      const read = reads[request.turn - 1];
      if (read) return { tool_calls: [{ name: 'agent_output', arguments: { run_id: runId, ...read } }] };
      return { text: 'done' };
    }),
    ...rest,
  });
  open.push(cadre);
  return cadre;
}

async function delegate(cadre: Cadre) {
  const session = await cadre.createSession();
  await cadre.send(session.id, 'go');
  await cadre.waitForIdle(session.id);
  const [run] = await cadre.store.listRuns({ parent_session_id: session.id });
  const messages = await cadre.store.listMessages(session.id);
  return { session, run, agent: toolOutputs(messages, 'agent'), output: toolOutputs(messages, 'agent_output') };
}

describe('result summaries', () => {
  it('gives the parent a summary of a long result, keeps the full text, counts its tokens and records a summary event', async () => {
    const cadre = makeCadre({
      summarize: { enabled: true, maxChars: 500 },
      summarizer: () => ({ text: 'The store keeps every run in a row.', usage: { input_tokens: 3000, output_tokens: 9 } }),
    });
    const { session, run, agent } = await delegate(cadre);
    expect(agent[0]).toBe(
      `run_id: ${run.id}\nagent: general\nstatus: completed\nsummarized: ${longResult.length} characters\n` +
        `note: This is a summary; page through the full result with agent_output (run_id: ${run.id}, offset, limit).\n\nThe store keeps every run in a row.`,
    );
    expect(run.result).toEqual({
      text: longResult,
      truncated: false,
      original_length: longResult.length,
      summarized: true,
      summary: 'The store keeps every run in a row.',
      summary_error: null,
    });
    expect(run.usage).toEqual({ input_tokens: 3010, output_tokens: 1009 });
    const events = await cadre.store.listRunEvents(run.id);
    const summary = events.find((event) => event.type === 'summary');
    expect(summary?.data).toEqual({ original_length: longResult.length, summary_length: 35 });
    expect(events.findIndex((event) => event.type === 'summary')).toBeLessThan(events.findIndex((event) => event.type === 'run-end'));
    const exported = await exportSession(cadre.store, session.id);
    expect(exported.runs[0].result).toMatchObject({ text: longResult, summary: 'The store keeps every run in a row.' });
    const markdown = renderMarkdownExport(exported);
    expect(markdown).toContain('**Summary the parent got** (35 characters)');
    expect(markdown).toContain('summarized for the parent');
  });

  it('falls back to the head and tail cut, with a note, when the summary fails', async () => {
    const cadre = makeCadre({ summarize: { enabled: true }, summarizer: () => ({ error: { status: 500, message: 'summarizer is down' } }) });
    const { run, agent } = await delegate(cadre);
    expect(agent[0]).toContain(`truncated: ${longResult.length} characters, `);
    expect(agent[0]).toMatch(/note: No summary: the summary failed: .*summarizer is down.*; showing the head and tail instead\. Page through the full result/);
    expect(agent[0]).toContain('characters omitted...]');
    expect(run.result).toMatchObject({ text: longResult, truncated: true, summarized: false, summary: null });
    const summary = (await cadre.store.listRunEvents(run.id)).find((event) => event.type === 'summary');
    expect(summary?.data).toMatchObject({ original_length: longResult.length, summary_length: 0 });
  });

  it('falls back to the cut when the summary takes longer than summarize.timeoutMs', async () => {
    const cadre = makeCadre({ summarize: { enabled: true, timeoutMs: 50 }, summarizer: () => ({ text: 'late', delay_ms: 2000 }) });
    const started = Date.now();
    const { run, agent } = await delegate(cadre);
    expect(Date.now() - started).toBeLessThan(1500);
    expect(agent[0]).toContain('note: No summary: the summary took longer than 50 ms; showing the head and tail instead.');
    expect(run.result?.summary_error).toBe('the summary took longer than 50 ms');
  });

  it('summarizes nothing when the result fits or summaries are off', async () => {
    let asked = 0;
    const cadre = makeCadre({ limits: { maxResultChars: 100_000 }, summarize: { enabled: true }, summarizer: () => (asked++, { text: 'x' }) });
    const { run } = await delegate(cadre);
    expect(run.result).toEqual({ text: longResult, truncated: false, original_length: longResult.length });
    const off = makeCadre({ summarizer: () => (asked++, { text: 'x' }) });
    const cut = await delegate(off);
    expect(cut.run.result?.truncated).toBe(true);
    expect(asked).toBe(0);
  });
});

describe('agent_output paging', () => {
  it('pages through the full result with offset and limit', async () => {
    const cadre = makeCadre({
      summarize: { enabled: true },
      summarizer: () => ({ text: 'short summary' }),
      reads: [{ offset: 0, limit: 1000 }, { offset: 1000, limit: 2000 }, { offset: longResult.length - 10 }],
    });
    const { run, output } = await delegate(cadre);
    expect(output[0]).toBe(
      `run_id: ${run.id}\nagent: general\nstatus: completed\nnote: Characters 0–1000 of ${longResult.length} of the full result. Call agent_output with offset: 1000 for the next page.\n\n${longResult.slice(0, 1000)}`,
    );
    expect(output[1]).toContain(`\n\n${longResult.slice(1000, 3000)}`);
    expect(output[2]).toContain(`This is the end.\n\n${longResult.slice(-10)}`);
  });

  it('answers bad paging input with a tool error that says what to fix', async () => {
    const cadre = makeCadre({
      summarizer: () => ({ text: 'x' }),
      reads: [{ offset: -1 }, { offset: 1.5 }, { limit: 0 }, { limit: 999_999 }, { offset: longResult.length }, { offset: 0, detail: 'transcript' }],
    });
    const { output } = await delegate(cadre);
    expect(output).toHaveLength(6);
    expect(output[0]).toMatch(/offset: must be 0 or more/);
    expect(output[1]).toMatch(/offset: must be a whole number of characters/);
    expect(output[2]).toMatch(/limit: must be at least 1/);
    expect(output[3]).toContain('limit: must be at most 2000 characters (limits.maxResultChars)');
    expect(output[4]).toContain(`offset: ${longResult.length} is past the end of the result, which has ${longResult.length} characters`);
    expect(output[5]).toContain('offset and limit page the result; leave them out with detail: "transcript".');
  });
});
