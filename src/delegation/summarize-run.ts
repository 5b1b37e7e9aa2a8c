import type { LanguageModel } from 'ai';
import type { AgentDefinition } from '../agents/agent-definition.ts';
import type { RunLive, RunSummary } from '../executors/run-setup.ts';
import type { RunRecord } from '../store/records.ts';
import type { Store } from '../store/store.ts';
import { summarizeResult, type SummarizeSettings } from './summarize-result.ts';

/** Options of {@link createRunSummarizer}. */
export interface RunSummarizerOptions {
  /** The runtime's `summarize` settings; summaries are made only with `enabled`. */
  settings: SummarizeSettings | undefined;
  /** Results longer than this are summarized. */
  maxResultChars: number;
  store: Pick<Store, 'getSession'>;
  /** The agent of this name, if cadre knows it. */
  agent: (name: string) => AgentDefinition | undefined;
  /** The runtime's model for a spec or alias (the default for none). */
  modelFor: (name: string | undefined) => LanguageModel;
}

/** Summarizes a run's result too long for its parent; null when it needs none. */
export type RunSummarizer = (
  run: RunRecord,
  text: string,
  runModel: LanguageModel,
  signal: AbortSignal,
  setActivity: RunLive['setActivity'],
) => Promise<RunSummary | null>;

/**
 * The summarizer of a runtime's run results (docs/runs-and-limits.md), or undefined when summaries are
 * off. The model that summarizes is the configured one, else the parent's, else the run's own
 * (a parent driven by a host outside cadre, or whose model cannot be had here).
 */
export function createRunSummarizer(options: RunSummarizerOptions): RunSummarizer | undefined {
  const settings = options.settings?.enabled ? options.settings : undefined;
  if (!settings) return undefined;

  async function summaryModel(run: RunRecord, runModel: LanguageModel): Promise<LanguageModel> {
    if (settings!.model !== undefined) return options.modelFor(settings!.model);
    const parent = await options.store.getSession(run.parent_session_id);
    const parentAgent = parent && options.agent(parent.agent);
    // A parent that is no agent of cadre's is a host's loop (an MCP client, an app's own loop).
    if (!parent || !parentAgent) return runModel;
    try {
      return options.modelFor(parentAgent.model ?? parent.model);
    } catch {
      return runModel;
    }
  }

  return async function summarizeRun(run, text, runModel, signal, setActivity) {
    if (text.length <= options.maxResultChars) return null;
    setActivity({ kind: 'summarizing', characters: text.length });
    const outcome = await summarizeResult(text, {
      model: await summaryModel(run, runModel),
      task: run.task,
      maxChars: settings.maxChars,
      timeoutMs: settings.timeoutMs,
      signal,
    });
    return outcome.ok ? { summary: outcome.summary, error: null, usage: outcome.usage } : { summary: null, error: outcome.reason, usage: outcome.usage };
  };
}
