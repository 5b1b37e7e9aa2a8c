/**
 * An app with its own AI SDK loop (`streamText`) and a `useChat` page, with cadre's subagents
 * inside: `cadre.tools` in the loop, `cadre.notifications` for background results, and
 * `cadre.writeRunParts` for live run cards with asks and a stop button.
 *
 *   npm run example:own-loop                                   # scripted model: no key, no network
 *   CADRE_MODEL=anthropic:claude-sonnet-4-5 ANTHROPIC_API_KEY=... npm run example:own-loop
 */
import { serve } from '@hono/node-server';
import { serveStatic } from '@hono/node-server/serve-static';
import {
  convertToModelMessages,
  createUIMessageStream,
  createUIMessageStreamResponse,
  isStepCount,
  streamText,
  tool,
  toUIMessageStream,
  type UIMessage,
} from 'ai';
import { createCadre, createSqliteStore, createWorkspaceTools, defineAgent, readToolNames, resolveModel } from 'cadre';
import { scriptedLanguageModel } from 'cadre/testing';
import { Hono } from 'hono';
import { relative } from 'node:path';
import { z } from 'zod';
import { respond } from './script.ts';

const model = process.env.CADRE_MODEL ? resolveModel(process.env.CADRE_MODEL) : scriptedLanguageModel(respond);
const instructions = 'You are a helpful assistant. Delegate work to subagents with the agent tool, in the background when it takes a while.';

// One of the app's own tools, which subagents get too; every call asks a person first.
const deploy = tool({
  description: 'Deploys the site to an environment (staging or production).',
  inputSchema: z.object({ target: z.enum(['staging', 'production']) }),
  execute: async ({ target }) => `deployed to ${target}`,
});

const cadre = createCadre({
  store: createSqliteStore({ path: process.env.CADRE_DB ?? ':memory:' }),
  model,
  tools: { ...createWorkspaceTools({ root: process.cwd() }), deploy },
  agents: [
    defineAgent({
      name: 'scout',
      description: 'Reads the workspace and reports facts.',
      system: 'You are the scout. Answer from the files.',
      tools: [...readToolNames],
      mode: 'subagent',
    }),
    defineAgent({
      name: 'deployer',
      description: 'Deploys the site.',
      system: 'You are the deployer. Deploy where you are told.',
      tools: ['deploy'],
      mode: 'subagent',
    }),
  ],
  permissions: { ask: ['deploy'] },
  approvals: 'wait',
  limits: { maxActivePerParent: 2 },
});

const app = new Hono();

app.post('/api/chat', async (context) => {
  const { id, messages } = await context.req.json<{ id: string; messages: UIMessage[] }>();
  const signal = context.req.raw.signal;
  const tools = cadre.tools({ sessionId: id });
  const notifications = cadre.notifications(id);
  const stream = createUIMessageStream({
    originalMessages: messages,
    execute: async ({ writer }) => {
      const history = await convertToModelMessages(messages);
      const result = streamText({
        model,
        instructions,
        messages: history,
        tools,
        prepareStep: notifications.prepareStep,
        stopWhen: isStepCount(10),
        abortSignal: signal,
      });
      // One assistant message holds the answer and the cards: it starts here and ends below.
      writer.write({ type: 'start' });
      writer.merge(toUIMessageStream({ stream: result.stream, sendStart: false, sendFinish: false }));
      // Run cards, live, until the runs the loop started have ended (or the page goes away).
      await cadre.writeRunParts(writer, { sessionId: id, signal, loop: result.response, runs: 'active' });
      // The page went away: its notifications wait for the next request (nothing is acknowledged).
      if (signal.aborted) return;
      // Runs that ended after the loop: their notifications go to the model for one more answer.
      const pending = await notifications.take();
      const more =
        pending.length === 0
          ? null
          : streamText({ model, instructions, messages: [...history, ...(await result.response).messages, ...pending], tools, abortSignal: signal });
      writer.merge(more ? toUIMessageStream({ stream: more.stream, sendStart: false }) : finished());
      await more?.response;
      // useChat keeps this conversation: once it is streamed, the notifications are delivered.
      await notifications.ack();
    },
  });
  return createUIMessageStreamResponse({ stream });
});

// useChat's `resume`: a page that comes back (a reload) gets every run's card as it stands now,
// then live until the runs end. No run active: nothing to resume (204).
app.get('/api/chat/:id/stream', async (context) => {
  const sessionId = context.req.param('id');
  const active = await cadre.store.listRuns({ parent_session_id: sessionId, statuses: ['queued', 'running'], limit: 1 });
  if (active.length === 0) return context.body(null, 204);
  const signal = context.req.raw.signal;
  const stream = createUIMessageStream({
    execute: async ({ writer }) => {
      writer.write({ type: 'start' });
      await cadre.writeRunParts(writer, { sessionId, signal });
      writer.write({ type: 'finish' });
    },
  });
  return createUIMessageStreamResponse({ stream });
});

// The cards' buttons. A real app checks that the ask or run belongs to the signed-in user's chat
// (`approval.session_id`, `run.parent_session_id`) before it answers or stops.
app.post('/api/approvals/:id', async (context) => {
  const { decision } = await context.req.json<{ decision: 'approve' | 'deny' }>();
  return context.json(await cadre.approve(context.req.param('id'), { decision }));
});

app.post('/api/runs/:id/stop', async (context) => context.json(await cadre.stopRun(context.req.param('id'), { reason: 'Stopped from the page.' })));

// Browsers ask for /favicon.ico whatever the page links: send them to the icon (public/favicon.svg).
app.get('/favicon.ico', (context) => context.redirect('/favicon.svg', 301));
app.use('/*', serveStatic({ root: relative(process.cwd(), new URL('dist', import.meta.url).pathname) }));

/** A stream with only the end of the message, when the loop says nothing more. */
function finished() {
  return new ReadableStream({ start: (controller) => (controller.enqueue({ type: 'finish' as const }), controller.close()) });
}

const port = Number(process.env.PORT ?? 3000);
const server = serve({ fetch: app.fetch, port, hostname: '127.0.0.1' }, (info) => console.log(`http://127.0.0.1:${info.port}`));
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    server.close();
    cadre.close().finally(() => process.exit(0));
  });
}
