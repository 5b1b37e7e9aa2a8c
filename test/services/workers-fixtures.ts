/**
 * What the worker tests share: a workspace whose runs go to two `cadre worker` processes, polling,
 * and a free port for servers of a test's own.
 * @module
 */
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { createWorkspace, type Workspace } from '../helpers/cadre-cli.ts';
import { postgresUrl, redisUrl } from './service-urls.ts';
import { eventually } from '../helpers/eventually.ts';

const script = resolve(import.meta.dirname, 'workers-script.yaml');

/** An agent that writes a file: its call asks for approval. */
export const writerAgent = `---
description: Writes files it is asked to write.
tools: [write_file]
mode: subagent
---
You are the writer. Write what you are asked to.
`;

/** A workspace whose runs go to two `cadre worker` processes, on the test Postgres and Redis; the model answers with `script` (by default workers-script.yaml). */
export async function workersWorkspace({
  queue = redisUrl,
  database = postgresUrl,
  script: scriptOf = script,
}: {
  queue?: string;
  database?: string;
  script?: NonNullable<Parameters<typeof createWorkspace>[0]>['script'];
} = {}): Promise<Workspace> {
  const previous = { queue: process.env.CADRE_E2E_QUEUE_URL, postgres: process.env.CADRE_E2E_POSTGRES_URL };
  const set = (name: string, value: string | undefined) => (value === undefined ? delete process.env[name] : (process.env[name] = value));
  // Without a database URL, each workspace has its SQLite file (its workers run on this machine).
  set('CADRE_E2E_QUEUE_URL', queue);
  set('CADRE_E2E_POSTGRES_URL', database);
  try {
    return await createWorkspace({ script: scriptOf });
  } finally {
    set('CADRE_E2E_QUEUE_URL', previous.queue);
    set('CADRE_E2E_POSTGRES_URL', previous.postgres);
  }
}

/** Looks at `check` every 200 ms until it returns something other than undefined. */
export async function until<T>(check: () => Promise<T | undefined>, timeoutMs: number, what: string): Promise<T> {
  const found = await eventually(
    async () => {
      const value = await check();
      return value === undefined ? undefined : { value };
    },
    { timeout: timeoutMs, interval: 200, what },
  );
  return found.value;
}

/**
 * Resolves once the workspace's scripted model received the call of `turn` (0: the first) of a
 * conversation whose system prompt includes `system` and whose messages include `task`, among the
 * calls from the `from`-th on: that call is under way. (A streamed step's `step-start` event is
 * written only once its response starts, so the run's events cannot say it.)
 */
export async function modelCallUnderWay(
  workspace: Workspace,
  { from, system, task, turn }: { from: number; system: string; task: string; turn: number },
  timeoutMs = 20_000,
): Promise<void> {
  await until(
    async () =>
      workspace.server.requests
        .slice(from)
        .some((request) => request.turn === turn && request.system.includes(system) && JSON.stringify(request.messages).includes(task))
        ? true
        : undefined,
    timeoutMs,
    `model call ${turn} of ${task}`,
  );
}

/** The pid in a lease owner `host:pid:tag`. */
export const pidOf = (owner: string | null) => (owner === null ? null : Number(owner.split(':')[1]));

/** A free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return new Promise((done) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}
