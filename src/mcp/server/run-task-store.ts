import type { CreateTaskOptions, TaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import type { Request, RequestId, Result, Task } from '@modelcontextprotocol/sdk/types.js';
import type { ToolSet } from 'ai';
import type { Cadre } from '../../runtime/create-cadre.ts';
import { isFinished, type RunRecord } from '../../store/records.ts';
import { callDelegationTool } from './call-delegation-tool.ts';

/** How often a client should poll a task, in milliseconds. */
const pollIntervalMs = 1000;

/** Options of {@link createRunTaskStore}. */
export interface RunTaskStoreOptions {
  cadre: Cadre;
  /** The parent session of `cadre mcp`: its runs are its tasks. */
  sessionId: string;
  /** The session's delegation tools (`agent_output`, `agent_stop`), whose answers tasks return. */
  tools: ToolSet;
}

/**
 * An MCP task store (revision 2025-11-25) whose tasks are cadre's runs: task id = run id, the
 * task's state is the run's, its result is what `agent_output` says of the run, and cancelling
 * it stops the run. Nothing lives in this process, so any `cadre mcp` on the same database (and
 * this one after a restart) reads and cancels the same tasks. The MCP session id is ignored on
 * purpose: tasks belong to cadre's parent session, which every connection of a workspace shares.
 */
export function createRunTaskStore({ cadre, sessionId, tools }: RunTaskStoreOptions): TaskStore {
  async function runOf(taskId: string): Promise<RunRecord | null> {
    const run = await cadre.store.getRun(taskId);
    return run && run.parent_session_id === sessionId ? run : null;
  }

  async function taskOf(run: RunRecord): Promise<Task> {
    let status = taskStatus(run);
    if (status === 'working') {
      const asks = await cadre.store.listApprovals({ statuses: ['pending'], session_id: sessionId });
      if (asks.some((ask) => ask.run_id === run.id)) status = 'input_required';
    }
    return {
      taskId: run.id,
      status,
      statusMessage: run.last_activity ?? undefined,
      createdAt: run.created_at,
      lastUpdatedAt: run.ended_at ?? run.started_at ?? run.created_at,
      // Runs are kept with the session, like every run cadre stores.
      ttl: null,
      pollInterval: pollIntervalMs,
    };
  }

  return {
    async createTask(taskParams: CreateTaskOptions, _requestId: RequestId, _request: Request): Promise<Task> {
      const runId = taskParams.context?.runId;
      if (typeof runId !== 'string') throw new Error('A task of cadre mcp is made by starting a run (the agent tool).');
      const run = await runOf(runId);
      if (!run) throw new Error(`No run '${runId}' in this session.`);
      return taskOf(run);
    },

    async getTask(taskId) {
      const run = await runOf(taskId);
      return run ? taskOf(run) : null;
    },

    async storeTaskResult() {
      // A run stores its own result when it ends; there is nothing else to keep.
    },

    async getTaskResult(taskId): Promise<Result> {
      const run = await runOf(taskId);
      if (!run) throw new Error(`No subagent run '${taskId}' in this session.`);
      return callDelegationTool(tools, 'agent_output', { run_id: taskId });
    },

    async updateTaskStatus(taskId, status, statusMessage) {
      if (status !== 'cancelled') return;
      const run = await runOf(taskId);
      if (run && !isFinished(run.status)) await cadre.stopRun(taskId, { cause: 'parent', reason: statusMessage ?? 'The MCP client cancelled the task.' });
    },

    async listTasks(cursor) {
      const runs = (await cadre.store.listRuns({ parent_session_id: sessionId })).sort((left, right) => (left.id < right.id ? 1 : -1));
      const start = cursor === undefined ? 0 : runs.findIndex((run) => run.id < cursor);
      const page = start < 0 ? [] : runs.slice(start, start + 50);
      const tasks = await Promise.all(page.map(taskOf));
      const last = page.at(-1);
      return start >= 0 && start + 50 < runs.length && last ? { tasks, nextCursor: last.id } : { tasks };
    },
  };
}

/** A run's state as an MCP task status; an ask for approval turns `working` into `input_required`. */
function taskStatus(run: RunRecord): Task['status'] {
  switch (run.status) {
    case 'queued':
    case 'running':
      return 'working';
    case 'completed':
    case 'completed_empty':
      return 'completed';
    case 'failed':
    case 'abandoned':
      return 'failed';
    default:
      return 'cancelled';
  }
}
