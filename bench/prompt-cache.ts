/**
 * `npm run bench -- --only cache` (`node bench/prompt-cache.ts [--turns 20] [--quick]`): the input
 * tokens an Anthropic model bills at the full rate over a session of 20 turns, with cadre's
 * prompt-cache breakpoints (`markPromptCache`, on every request of an `anthropic` model) and
 * without them. `--quick` uses 5 turns.
 *
 * cadre talks to the scripted server's Messages wire (`anthropic:claude-scripted` pointed at it,
 * as `test/helpers/wires.ts` does). The scripted server reports only the cache counts a script
 * gives it; it does not derive them from the breakpoints. So this bench applies Anthropic's
 * documented rule to the request bodies the server received: a request is its blocks in order
 * (each tool, each system block, each content part of each message); each block carrying
 * `cache_control` is a breakpoint; at a breakpoint the longest prefix ending at it or up to 20
 * blocks before it that an earlier request wrote is read from the cache (billed at 0.1×); the
 * rest up to the last breakpoint is written (1.25×); what follows the last breakpoint is billed at
 * the full rate. Prefixes under 1,024 tokens are not cached (Sonnet's minimum). Tokens are the
 * block's JSON characters / 4, as the scripted server counts input.
 *
 * "Without" is the same session on the same model object seen under another provider name, so
 * cadre's model stack does not add the marks (it adds them only for providers that read them).
 * @module
 */
import { createHash } from 'node:crypto';
import { parseArgs } from 'node:util';
import { resolveModel } from '../src/models/resolve-model.ts';
import { createCadre } from '../src/runtime/create-cadre.ts';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { startScriptedServer, type ScriptedServer } from '../src/testing/index.ts';
import { fixed, markdownTable } from './measure.ts';

// The AI SDK warns on every call that it does not know the scripted model's output limit.
(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

/** Anthropic's smallest cacheable prefix for Sonnet models, in tokens. */
const minimumCacheable = 1024;
/** How many blocks before a breakpoint Anthropic looks for an earlier cache entry. */
const lookback = 20;

const answer = `${'The module reads its configuration once, validates it and hands it on; nothing else touches it. '.repeat(6)}That is all for this part.`;

interface Billing {
  requests: number;
  marks: number;
  total: number;
  full: number;
  read: number;
  write: number;
}

/** A request body's blocks in Anthropic's cache order: tools, system, then each message's parts. */
function blocksOf(body: Record<string, unknown>): unknown[] {
  const tools = (body.tools as unknown[] | undefined) ?? [];
  const system = body.system === undefined ? [] : typeof body.system === 'string' ? [{ type: 'text', text: body.system }] : (body.system as unknown[]);
  const messages = (body.messages as Array<{ role: string; content: unknown }>).flatMap(({ role, content }) =>
    (typeof content === 'string' ? [{ type: 'text', text: content }] : (content as object[])).map((part) => ({ role, ...part })),
  );
  return [...tools, ...system, ...messages];
}

/** The tokens each request bills at the full rate, read from and written to the cache (see the module's text). */
export function billAnthropicCache(bodies: ReadonlyArray<Record<string, unknown>>): Billing {
  const cache = new Set<string>();
  const billing: Billing = { requests: bodies.length, marks: 0, total: 0, full: 0, read: 0, write: 0 };
  for (const body of bodies) {
    const blocks = blocksOf(body);
    // tokens[i] and keys[i]: the prefix of the first i blocks.
    const tokens = [0];
    const keys = [''];
    const breakpoints: number[] = [];
    blocks.forEach((block, index) => {
      const { cache_control: mark, ...rest } = block as Record<string, unknown>;
      const text = JSON.stringify(rest);
      tokens.push(tokens[index] + Math.ceil(text.length / 4));
      keys.push(createHash('sha256').update(keys[index]).update(text).digest('hex'));
      if (mark !== undefined) breakpoints.push(index + 1);
    });
    billing.marks += breakpoints.length;
    let hit = 0;
    for (const end of breakpoints) {
      for (let length = end; length >= Math.max(1, end - lookback); length--) {
        if (cache.has(keys[length])) {
          hit = Math.max(hit, length);
          break;
        }
      }
    }
    const cachedEnd = Math.max(0, ...breakpoints.filter((end) => tokens[end] >= minimumCacheable));
    const total = tokens[blocks.length];
    const read = tokens[hit];
    const write = cachedEnd > hit ? tokens[cachedEnd] - read : 0;
    for (const end of breakpoints) if (tokens[end] >= minimumCacheable) cache.add(keys[end]);
    billing.total += total;
    billing.read += read;
    billing.write += write;
    billing.full += total - read - write;
  }
  return billing;
}

/** One session of `turns` turns; the bodies of its model requests. */
async function session(server: ScriptedServer, turns: number, marks: boolean): Promise<Record<string, unknown>[]> {
  const env = { ANTHROPIC_API_KEY: 'test-anthropic-key' };
  const anthropic = resolveModel('anthropic:claude-scripted', { baseURL: server.baseURL, env });
  // The same model under another provider name: cadre's model stack leaves its requests unmarked.
  const model = marks ? anthropic : (Object.create(anthropic, { provider: { value: 'bench.unmarked' } }) as typeof anthropic);
  const before = server.received.length;
  const cadre = createCadre({ store: createSqliteStore({ path: ':memory:' }), model, maxRetries: 0, onError: (error) => console.error(error) });
  try {
    const created = await cadre.createSession();
    for (let turn = 1; turn <= turns; turn++) {
      const result = await cadre.send(created.id, `Question ${turn}: what does part ${turn} of the configuration module do, and who reads it?`);
      if (result.status !== 'completed') throw new Error(`Turn ${turn} ended ${result.status}.`);
    }
  } finally {
    await cadre.close();
  }
  return server.received
    .slice(before)
    .filter((request) => request.method === 'POST' && request.path === '/v1/messages')
    .map((request) => request.body as Record<string, unknown>);
}

/** The figures as Markdown. */
export async function runPromptCache({ turns = 20 }: { turns?: number } = {}): Promise<string> {
  const server = await startScriptedServer({ script: [{ turns: [{ text: answer }] }] });
  try {
    const marked = billAnthropicCache(await session(server, turns, true));
    const unmarked = billAnthropicCache(await session(server, turns, false));
    if (marked.requests !== turns || unmarked.requests !== turns) throw new Error(`${marked.requests} and ${unmarked.requests} requests, not ${turns} each.`);
    if (marked.marks === 0 || unmarked.marks !== 0) throw new Error(`${marked.marks} breakpoints with marks and ${unmarked.marks} without.`);
    if (marked.total !== unmarked.total) throw new Error(`The two sessions sent ${marked.total} and ${unmarked.total} input tokens: not the same requests.`);
    // What the input costs in full-rate tokens: cache writes at 1.25×, reads at 0.1× (Anthropic's 5-minute cache).
    const cost = (billing: Billing) => billing.full + 1.25 * billing.write + 0.1 * billing.read;
    const row = (name: string, billing: Billing) => [
      name,
      billing.requests,
      billing.marks,
      billing.total,
      billing.full,
      billing.write,
      billing.read,
      fixed(cost(billing)),
    ];
    const table = markdownTable(
      ['session', 'requests', 'breakpoints', 'input tokens', 'billed at full rate', 'cache writes (1.25×)', 'cache reads (0.1×)', 'cost in full-rate tokens'],
      [row('with cadre’s breakpoints', marked), row('without breakpoints', unmarked)],
    );
    const ratio = (without: number, with_: number) => (with_ === 0 ? `${without} / 0` : `${fixed(without / with_, 1)}×`);
    return `## Prompt caching, Anthropic, a session of ${turns} turns\n\n${table}\n\nWithout / with breakpoints: tokens billed at the full rate ${ratio(unmarked.full, marked.full)}; tokens not read from the cache (full rate and writes) ${ratio(unmarked.full + unmarked.write, marked.full + marked.write)}; input cost ${ratio(cost(unmarked), cost(marked))}.`;
  } finally {
    await server.close();
  }
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { turns: { type: 'string' }, quick: { type: 'boolean', default: false } }, strict: false });
  const turns = values.turns !== undefined ? Number(values.turns) : values.quick ? 5 : 20;
  if (!Number.isInteger(turns) || turns < 1) {
    console.error('--turns takes a positive whole number.');
    process.exit(2);
  }
  console.log(await runPromptCache({ turns }));
}
