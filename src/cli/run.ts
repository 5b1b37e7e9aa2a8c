import type { AgentRegistry } from '../agents/agent-registry.ts';
import { ConfigError } from '../errors/config-error.ts';
import { warnAtStart } from './start-warnings.ts';
import { cadreCommand, databaseFlag } from './closing-hints.ts';
import { StoreFailureError } from '../store/store-failure-error.ts';
import { colorEnabled, liveViewEnabled, writeLine, type CliContext } from './cli-context.ts';
import type { RuntimeFlags } from './command-options.ts';
import { approvalModeOf, type ApprovalFlags } from './approval-mode.ts';
import { createTerminalApprover } from './terminal-approver.ts';
import { driveSession } from './drive-session.ts';
import { createJsonView } from './json-view.ts';
import { openRuntime, type OpenedRuntime } from './open-runtime.ts';
import { createPlainView } from './plain-view.ts';
import { quietConsole } from './quiet-console.ts';
import { readPrompt } from './read-prompt.ts';
import { createSessionWriter } from '../sessions/session-writer.ts';
import type { RunView } from './run-view.ts';
import type { AutoResumeStop } from '../sessions/auto-resume.ts';

/** Options of `cadre run`. */
export interface RunFlags extends RuntimeFlags, ApprovalFlags {
  session?: string;
  /** `--continue`: the most recent primary session. */
  continue?: boolean;
}

const exitCodes = { completed: 0, failed: 1, canceled: 130 } as const;

/** The session `--continue` goes on with: the primary session created last. */
async function latestSessionId(runtime: OpenedRuntime): Promise<string> {
  const [latest] = await runtime.store.listSessions({ primaryOnly: true, limit: 1 });
  if (!latest) throw new ConfigError('No session to continue in this database: start one with cadre run "..."');
  return latest.id;
}

async function openSession(runtime: OpenedRuntime, flags: RunFlags) {
  const { cadre, store, config } = runtime;
  if (flags.continue && flags.session !== undefined) throw new ConfigError('--continue and --session both name a session: give one.');
  const sessionId = flags.continue ? await latestSessionId(runtime) : flags.session;
  if (sessionId === undefined) return cadre.createSession({ agent: config.agent });
  const session = await store.getSession(sessionId);
  if (!session) throw new ConfigError(`No session '${sessionId}'. List sessions with: cadre sessions`);
  if (session.parent_run_id !== null) {
    throw new ConfigError(`Session '${session.id}' is the child session of run ${session.parent_run_id}; continue a primary session (see cadre sessions).`);
  }
  if (flags.agent !== undefined && flags.agent !== session.agent) {
    throw new ConfigError(`Session '${session.id}' talks to agent '${session.agent}'; --agent cannot change it. Leave out --agent, or start a new session.`);
  }
  // The session goes on with the model configured now (--model, CADRE_MODEL or the config file).
  const { describeModel } = await import('../models/describe-model.ts');
  const model = describeModel(config.model ?? session.model);
  if (model !== session.model) await createSessionWriter({ store }).setModel(session.id, model);
  // Runs left queued or running by a process that died are recovered by driveSession, once the
  // view listens, so every recovered run is shown.
  return { ...session, model };
}

async function chooseView(
  context: CliContext,
  sessionId: string,
  json: boolean | undefined,
  prompting: boolean,
  asksWait: boolean,
  agents: AgentRegistry,
): Promise<RunView> {
  if (json) return createJsonView({ stdout: context.stdout, stderr: context.stderr });
  if (liveViewEnabled(context)) {
    const [{ createLiveView }, { resolveAgentColor }] = await Promise.all([import('./live-view.ts'), import('../agents/agent-color.ts')]);
    const agentColor = (name: string) => resolveAgentColor(agents.get(name)?.color);
    return createLiveView({ stdout: context.stdout, stderr: context.stderr, sessionId, color: colorEnabled(context), prompting: () => prompting, agentColor });
  }
  return createPlainView({ stdout: context.stdout, stderr: context.stderr, sessionId, answerHint: asksWait });
}

/**
 * Says once what happened to the store and what to do, with how to continue the session once it
 * is fixed; not for a database deleted or replaced (the session is gone) or damaged.
 */
function reportStoreFailure(
  context: CliContext,
  failure: StoreFailureError,
  session: { sessionId: string; databaseFlag: string | undefined } | undefined,
  json: boolean,
): void {
  const resumable = session !== undefined && failure.kind !== 'replaced' && failure.kind !== 'damaged';
  const resume = resumable ? `cadre run --session ${session.sessionId}${session.databaseFlag ? ` ${session.databaseFlag}` : ''} "..."` : undefined;
  if (json) {
    writeLine(context.stdout, JSON.stringify({ type: 'error', kind: failure.kind, message: failure.message, ...(resume ? { continue: resume } : {}) }));
    return;
  }
  writeLine(context.stderr, `cadre: ${failure.message}`);
  if (resume) writeLine(context.stderr, `  continue: ${resume}`);
}

/** The line that says the session stopped resuming on its own, and how to go on. */
function autoResumeStopLine(stop: AutoResumeStop, sessionId: string, context: CliContext, runtime: OpenedRuntime): string {
  const database = databaseFlag(context.cwd, context.env, runtime.config.db);
  const notifications = stop.waiting === 1 ? '1 notification waits' : `${stop.waiting} notifications wait`;
  return `cadre: auto-resume stopped after ${stop.resumes} resume${stop.resumes === 1 ? '' : 's'} (limits.maxAutoResumes); ${notifications} for the next turn: ${cadreCommand(context.env)} run --session ${sessionId}${database ? ` ${database}` : ''} "..."`;
}

/** `cadre run [PROMPT]`: the primary agent works on a prompt; exit code 0, 1 (it failed), 2 or 130 (stopped). */
export async function runCommand(context: CliContext, promptArgument: string | undefined, flags: RunFlags): Promise<number> {
  const approvals = approvalModeOf(context, flags);
  const prompt = await readPrompt(context, promptArgument);
  // The question pauses the view, which is made once the session is known.
  let view: RunView | undefined;
  const approver =
    approvals === 'ask'
      ? createTerminalApprover({
          input: context.stdin,
          output: context.stderr,
          pause: () => view?.pause?.() ?? (() => {}),
          onInterrupt: () => process.emit('SIGINT'),
        })
      : undefined;
  // A warning during the turn (an MCP server that failed to start) pauses a live view to be written.
  const onWarning = (line: string) => {
    const resume = view?.pause?.();
    writeLine(context.stderr, line);
    resume?.();
  };
  const runtime = await openRuntime({ context, flags, requireModel: true, approvals, approver, onWarning });
  // Of the agents' files, only the agent this run talks to is reported here; `cadre agents` reports them all.
  const primary = runtime.agents.get(runtime.config.agent);
  const { reportAgent } = await import('../agents/report-agent.ts');
  const primaryWarning = primary ? reportAgent(primary, { tools: runtime.tools, aliases: runtime.config.modelAliases, env: context.env }).warning : null;
  const problems = [...runtime.agents.errors.map((error) => error.message), ...(primaryWarning === null ? [] : [primaryWarning])];
  await warnAtStart(context, problems, runtime.sandbox);
  const restoreConsole = quietConsole(flags.debug === true);
  let sessionId: string | undefined;
  try {
    const session = await openSession(runtime, flags);
    sessionId = session.id;
    view = await chooseView(context, session.id, flags.json, approver !== undefined, approvals === 'ask' || approvals === 'wait', runtime.agents);
    const outcome = await driveSession({ cadre: runtime.cadre, sessionId: session.id, prompt, view, recover: flags.session !== undefined });
    view.finish({ ...outcome, databaseFlag: databaseFlag(context.cwd, context.env, runtime.config.db), command: cadreCommand(context.env) });
    if (outcome.status === 'failed') writeLine(context.stderr, `cadre: the primary agent failed: ${outcome.error}`);
    if (outcome.autoResumeStop) writeLine(context.stderr, autoResumeStopLine(outcome.autoResumeStop, session.id, context, runtime));
    return exitCodes[outcome.status];
  } catch (error) {
    if (!StoreFailureError.isInstance(error)) throw error;
    reportStoreFailure(
      context,
      error,
      sessionId === undefined ? undefined : { sessionId, databaseFlag: databaseFlag(context.cwd, context.env, runtime.config.db) },
      flags.json === true,
    );
    return 1;
  } finally {
    await runtime.close();
    restoreConsole();
  }
}
