import type { ModelMessage } from 'ai';
import { ToolInputError } from '../tools/define-tool.ts';
import { checkOutputSchema } from '../output/output-schema.ts';
import type { RunMode, RunRecord } from '../store/records.ts';
import { isFinished } from '../store/records.ts';
import type { RunHold } from '../runs/run-manager.ts';
import type { DelegationScope, DelegationServices } from './delegation-services.ts';
import { gateDelegation } from './delegation-rules.ts';
import { cutAtWordBoundary } from './truncate-result.ts';
import type { RunWorktrees } from '../worktrees/run-worktrees.ts';
import { WorktreeError } from '../worktrees/worktree-error.ts';

/** One delegation as the model asked for it. */
export interface DelegationRequest {
  agent: string;
  task: string;
  description?: string;
  context?: string;
  max_turns?: number;
  resume?: string;
  /** The JSON Schema the result must match; it wins over the agent's and a resumed run's. */
  output_schema?: Record<string, unknown>;
  /**
   * Set for a fork: the conversation the calling step sent to its model (the AI SDK gives a tool's
   * `execute` the step's `messages`), which the child session starts with. @default a fresh session
   */
  fork?: { messages: readonly ModelMessage[] };
  /** `worktree`: the run works in a git worktree of its own; the agent's `isolation` otherwise. */
  isolation?: 'worktree';
  mode: RunMode;
  toolCallId: string | null;
  /** The workflow call that asks for the run: its workflow and durable key, and the hash of its inputs (section 22). */
  workflow?: { id: string; key: string; input_hash: string };
}

/** The heading the parent's context goes under in the subagent's first message. */
export const contextHeading = '## Context from parent session';

/** Checks a request before anything is made; throws a {@link ToolInputError} the model can act on. */
export async function checkDelegation(services: DelegationServices, scope: DelegationScope, request: DelegationRequest): Promise<RunRecord | null> {
  const definition = services.agents.get(request.agent);
  // A fork of the caller runs the caller's own agent, a primary one too.
  const forksItself = request.fork !== undefined && request.agent === scope.agent;
  if (!definition || (definition.mode === 'primary' && !forksItself)) throw new ToolInputError(services.agents.unknownAgentMessage(request.agent));
  if (request.task.trim() === '') throw new ToolInputError('task: must not be empty. Say what the subagent should do.');
  if (request.fork !== undefined && scope.agent === undefined) throw new ToolInputError('fork: not offered here: cadre does not hold this conversation.');
  if (request.fork !== undefined && request.resume) {
    throw new ToolInputError('fork: cannot be combined with resume (a resumed run goes on with its own conversation). Leave out one of them.');
  }
  // A fork of an agent at the depth limit keeps its delegation tools (its requests stay those of its parent): they refuse here.
  if (scope.depth >= services.limits.maxDepth) {
    throw new ToolInputError(
      `Delegation is not allowed at this depth: this agent runs at depth ${scope.depth} and limits.maxDepth is ${services.limits.maxDepth}. Do the task yourself.`,
    );
  }
  if (request.output_schema !== undefined) {
    try {
      checkOutputSchema(request.output_schema);
    } catch (error) {
      throw new ToolInputError(`output_schema: ${(error as Error).message}`);
    }
  }
  const spent = await services.budget.sessionSpent(scope.sessionId);
  if (spent) throw new ToolInputError(spent);
  if ((request.isolation ?? definition.isolation) === 'worktree') await worktreesOf(services).repository().catch(asToolError);
  if (!request.resume) return null;
  const earlier = await services.store.getRun(request.resume);
  if (!earlier || earlier.parent_session_id !== scope.sessionId) {
    throw new ToolInputError(`resume: No subagent run '${request.resume}' in this session.`);
  }
  if (!isFinished(earlier.status)) {
    throw new ToolInputError(`resume: run '${earlier.id}' is still ${earlier.status}; wait for it with agent_output or stop it with agent_stop first.`);
  }
  if (earlier.agent !== request.agent) {
    throw new ToolInputError(`resume: run '${earlier.id}' was agent '${earlier.agent}', not '${request.agent}'. Use agent: ${earlier.agent}.`);
  }
  return earlier;
}

/**
 * Starts one delegation: a fresh child session (or the earlier run's, to resume) whose next user
 * message is the task, with the parent's context before it under its heading.
 */
export async function startDelegation(services: DelegationServices, scope: DelegationScope, request: DelegationRequest): Promise<RunRecord> {
  const earlier = await checkDelegation(services, scope, request);
  const definition = services.agents.get(request.agent)!;
  // The rules on delegation (section 19): a denial throws before anything is made.
  const hold: RunHold | undefined = await gateDelegation(services, scope, definition.name);
  const at = services.now();
  const childSessionId = earlier?.child_session_id ?? services.newId('ses');
  const runId = services.newId('run');
  // A fork of the caller itself goes on with the caller's model, as with its prompt and tools.
  const parentSession = request.fork !== undefined && definition.name === scope.agent ? await services.store.getSession(scope.sessionId) : null;
  // Made before anything else, so a worktree that cannot be made (no commit to start from) starts no run.
  // A follow-up goes on in the worktree of the run it follows (a fresh one from its branch's tip where that one is gone).
  const followed = earlier?.worktree ? await worktreesOf(services).follow(earlier.worktree, runId).catch(asToolError) : null;
  const worktree =
    followed?.worktree ?? ((request.isolation ?? definition.isolation) === 'worktree' ? await worktreesOf(services).create(runId).catch(asToolError) : null);
  if (!earlier) {
    await services.store.createSession({
      id: childSessionId,
      agent: definition.name,
      model: parentSession?.model ?? services.modelLabelFor(definition.name),
      created_at: at,
      status: 'idle',
      parent_run_id: runId,
      auto_resumes: 0,
      user_canceled_at: null,
    });
  }
  const context = request.context?.trim() ? cutAtWordBoundary(request.context.trim(), services.limits.maxContextChars) : null;
  const content = context ? `${contextHeading}\n\n${context}\n\n${request.task}` : request.task;
  // A fork's child session holds its copy of the conversation, so a crash and resume read it back.
  const copied = (request.fork?.messages ?? []).map((message) => ({
    session_id: childSessionId,
    role: message.role,
    content: message.content,
    created_at: at,
  }));
  await services.store.appendMessages([...copied, { session_id: childSessionId, role: 'user', content, created_at: at }]);
  return services.runs.start(
    {
      id: runId,
      parent_session_id: scope.sessionId,
      child_session_id: childSessionId,
      parent_run_id: scope.parentRunId,
      tool_call_id: request.toolCallId,
      agent: definition.name,
      description: describe(request),
      task: request.task,
      context,
      mode: request.mode,
      depth: scope.depth + 1,
      max_turns: request.max_turns ?? definition.maxTurns ?? services.limits.defaultMaxTurns,
      resumed_from: earlier?.id ?? null,
      // The call's schema wins; a follow-up keeps the schema of the run it follows, then the agent's.
      output_schema: request.output_schema ?? earlier?.output_schema ?? definition.outputSchema ?? null,
      forked_from: request.fork === undefined ? null : (scope.parentRunId ?? scope.sessionId),
      worktree,
      ...(followed?.fresh ? { warnings: [{ kind: 'worktree_fresh', at }] } : {}),
      ...(request.workflow ? { workflow: { id: request.workflow.id, key: request.workflow.key }, input_hash: request.workflow.input_hash } : {}),
    },
    hold ? { hold } : undefined,
  );
}

function worktreesOf(services: DelegationServices): RunWorktrees {
  if (!services.worktrees) throw new ToolInputError('isolation: this runtime has no workspace for worktrees; delegate without isolation.');
  return services.worktrees;
}

/** A worktree that cannot be made is the model's to hear about (not a git repository, no commit yet). */
function asToolError(error: unknown): never {
  if (WorktreeError.isInstance(error)) throw new ToolInputError(error.message);
  throw error;
}

function describe(request: DelegationRequest): string {
  const given = request.description?.trim();
  if (given) return given.slice(0, 80);
  const line = request.task.replace(/\s+/g, ' ').trim();
  return line.length <= 80 ? line : `${line.slice(0, 77)}...`;
}
