import { AsyncLocalStorage } from 'node:async_hooks';
import { describe, expect, it } from 'vitest';
import type { WorkflowApi } from '../workflow-api.ts';
import { runSandboxedScript, type ScriptSandboxOptions } from './run-sandboxed-script.ts';
import { WorkflowScriptError } from './workflow-script-error.ts';

/** A fake engine: keys calls by their parallel/pipeline path the way a durable engine would, through async context. */
function fakeWorkflow(answer: (agent: string, task: string) => unknown | Promise<unknown> = (agent, task) => `${agent}: ${task}`) {
  const path = new AsyncLocalStorage<string>();
  const calls: { key: string; agent: string; task: string; options: unknown }[] = [];
  const counters = new Map<string, number>();
  const phases: string[] = [];
  const log: string[] = [];
  const w: WorkflowApi = {
    async agent(agent, task, options) {
      const where = path.getStore() ?? '';
      const number = counters.get(where) ?? 0;
      counters.set(where, number + 1);
      calls.push({ key: `${where}#${number}`, agent, task, options });
      return answer(agent, task);
    },
    parallel: (thunks) => Promise.all(thunks.map((thunk, index) => path.run(`${path.getStore() ?? ''}/p${index}`, () => thunk(w)))),
    async pipeline(items, ...stages) {
      return Promise.all(
        items.map(async (item, index) => {
          let value = item;
          for (const [stage, fn] of stages.entries()) value = await path.run(`${path.getStore() ?? ''}/i${index}s${stage}`, () => fn(value, index, w));
          return value;
        }),
      );
    },
    phase: (name) => void phases.push(name),
    log: (text) => void log.push(text),
  };
  return { w, calls, phases, log };
}

const quick: ScriptSandboxOptions = { cpuMs: 500, memoryBytes: 16 * 1024 * 1024, stackBytes: 256 * 1024, idleMs: 200 };

async function failure(script: string, options: ScriptSandboxOptions = quick, w = fakeWorkflow().w): Promise<WorkflowScriptError> {
  const error = await runSandboxedScript(script, w, {}, options).then(
    (value) => {
      throw new Error(`expected a failure, got ${JSON.stringify(value)}`);
    },
    (thrown: unknown) => thrown,
  );
  expect(WorkflowScriptError.isInstance(error)).toBe(true);
  return error as WorkflowScriptError;
}

// Each script starts a worker and compiles QuickJS: seconds on a busy machine.
describe('runSandboxedScript', { timeout: 60_000 }, () => {
  it('runs the script with w and input and returns its value as JSON', async () => {
    const { w, calls, phases, log } = fakeWorkflow();
    const script = `
      w.phase('review');
      const reviews = await w.parallel(input.files.map((file) => () => w.agent('reviewer', 'Review ' + file)));
      w.log('reviewed ' + reviews.length);
      w.phase('summary');
      return { reviews, summary: await w.agent('writer', 'Summarize', { description: 'sum' }) };`;
    const output = await runSandboxedScript(script, w, { files: ['a.ts', 'b.ts', 'c.ts'] }, quick);
    expect(output).toEqual({
      reviews: ['reviewer: Review a.ts', 'reviewer: Review b.ts', 'reviewer: Review c.ts'],
      summary: 'writer: Summarize',
    });
    expect(phases).toEqual(['review', 'summary']);
    expect(log).toEqual(['reviewed 3']);
    expect(calls.map((call) => call.key)).toEqual(['/p0#0', '/p1#0', '/p2#0', '#0']);
    expect(calls[3].options).toEqual({ description: 'sum' });
  });

  it('keys a call made after an await inside a branch by that branch, whatever order the runs end in', async () => {
    const delays: Record<string, number> = { 'first a': 30, 'first b': 1, 'first c': 10 };
    const { w, calls } = fakeWorkflow(async (_agent, task) => {
      await new Promise((resolve) => setTimeout(resolve, delays[task] ?? 0));
      return task;
    });
    const script = `
      return w.parallel(['a', 'b', 'c'].map((name) => async () => {
        const first = await w.agent('x', 'first ' + name);
        return w.agent('y', 'then ' + first);
      }));`;
    expect(await runSandboxedScript(script, w, null, quick)).toEqual(['then first a', 'then first b', 'then first c']);
    const keys = Object.fromEntries(calls.map((call) => [call.task, call.key]));
    expect(keys).toEqual({
      'first a': '/p0#0',
      'first b': '/p1#0',
      'first c': '/p2#0',
      'then first a': '/p0#1',
      'then first b': '/p1#1',
      'then first c': '/p2#1',
    });
  });

  it('passes items through pipeline stages and returns undefined as null', async () => {
    const { w, calls } = fakeWorkflow((_agent, task) => task.toUpperCase());
    const script = `
      const out = await w.pipeline(input, (item) => w.agent('a', item), async (value, index) => value + index);
      if (out.join() !== 'X0,Y1') throw new Error(out.join());`;
    expect(await runSandboxedScript(script, w, ['x', 'y'], quick)).toBeNull();
    expect(calls.map((call) => call.key).sort()).toEqual(['/i0s0#0', '/i1s0#0']);
  });

  it('lets the script catch a run that did not complete, with its run id, status and error', async () => {
    const { w } = fakeWorkflow(() => {
      throw Object.assign(new Error('run run_1 failed'), { runId: 'run_1', status: 'failed', error: { kind: 'max_turns', message: 'out of turns' } });
    });
    const script = `try { await w.agent('a', 'b'); } catch (error) { return [error.message, error.run_id, error.runId, error.status, error.error.kind]; }`;
    expect(await runSandboxedScript(script, w, null, quick)).toEqual(['run run_1 failed', 'run_1', 'run_1', 'failed', 'max_turns']);
  });

  it('refuses w.agent calls past maxRuns inside the script, which may catch it', async () => {
    const { w, calls } = fakeWorkflow();
    const script = `
      await w.agent('a', '1'); await w.agent('a', '2');
      try { await w.agent('a', '3'); } catch (error) { return error.message; }`;
    expect(await runSandboxedScript(script, w, null, { ...quick, maxRuns: 2 })).toBe('This workflow may start at most 2 runs (limits.maxWorkflowRuns).');
    expect(calls).toHaveLength(2);
  });
});

describe('a hostile script', { timeout: 60_000 }, () => {
  it('finds no host object, clock, randomness, timer, require or process', async () => {
    const { w } = fakeWorkflow();
    const script = `
      const names = Object.getOwnPropertyNames(globalThis);
      return {
        names,
        types: [typeof Date, typeof Math.random, typeof setTimeout, typeof setInterval, typeof setImmediate, typeof queueMicrotask,
          typeof require, typeof process, typeof module, typeof fetch, typeof console, typeof performance, typeof WeakRef,
          typeof FinalizationRegistry, typeof __cadre_outbound, typeof ArrayBuffer, typeof SharedArrayBuffer, typeof std, typeof os],
        viaEval: eval('typeof process'),
        viaFunction: new Function('return typeof globalThis.process + typeof globalThis.require')(),
      };`;
    const output = (await runSandboxedScript(script, w, null, quick)) as { names: string[]; types: string[]; viaEval: string; viaFunction: string };
    expect(new Set(output.types)).toEqual(new Set(['undefined']));
    expect(output.viaEval).toBe('undefined');
    expect(output.viaFunction).toBe('undefinedundefined');
    const standard = new Set(
      'Error EvalError RangeError ReferenceError SyntaxError TypeError URIError InternalError AggregateError Array Object Function Iterator parseInt parseFloat isNaN isFinite decodeURI decodeURIComponent encodeURI encodeURIComponent escape unescape Infinity NaN undefined eval Number Boolean String Math Reflect Symbol globalThis BigInt RegExp JSON Proxy Map Set WeakMap WeakSet Promise'.split(
        ' ',
      ),
    );
    expect(output.names.filter((name) => !standard.has(name))).toEqual([]);
  });

  it.each([
    ['this.constructor.constructor', `return this.constructor.constructor('return process')().pid`, /'process' is not defined/],
    ['the constructor of w', `return w.agent.constructor.constructor('return process')().pid`, /'process' is not defined/],
    [
      'a globalThis walk',
      `return Object.getOwnPropertyNames(globalThis).map((name) => globalThis[name]).find((value) => value && value.versions).versions`,
      /undefined/,
    ],
    ['require', `return require('node:fs').readFileSync('/etc/passwd', 'utf8')`, /'require' is not defined/],
    ['import()', `return (await import('node:fs')).readFileSync('/etc/passwd', 'utf8')`, /could not load module/],
    ['Date.now', `return Date.now()`, /'Date' is not defined/],
    ['Math.random', `return Math.random()`, /not a function/],
    ['setTimeout', `await new Promise((resolve) => setTimeout(resolve, 1))`, /'setTimeout' is not defined/],
  ])('gets a tool error reaching for %s', async (_what, script, message) => {
    const error = await failure(script);
    expect(error.kind).toBe('threw');
    expect(error.message).toMatch(message);
  });

  it('gets a syntax error for a static import', async () => {
    const error = await failure(`import fs from 'node:fs'; return fs;`);
    expect(error.kind).toBe('syntax');
    expect(error.message).toMatch(/^The script threw SyntaxError: /);
  });

  it('pollutes no prototype of the host with what it returns', async () => {
    const { w } = fakeWorkflow();
    const script = `
      Object.prototype.polluted = 'yes';
      const parsed = JSON.parse('{"__proto__": {"polluted": "yes"}, "constructor": {"prototype": {"polluted": "yes"}}}');
      return { parsed, literal: { ['__proto__']: { polluted: 'yes' } }, plain: {} };`;
    const output = (await runSandboxedScript(script, w, null, quick)) as Record<string, any>;
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(output)).toBe(Object.prototype);
    expect(Object.getPrototypeOf(output.parsed)).toBe(Object.prototype);
    expect(Object.hasOwn(output.parsed, '__proto__')).toBe(true);
    expect(output.plain).toEqual({});
  });

  it('is stopped when it loops forever', async () => {
    const started = process.hrtime.bigint();
    const error = await failure(`while (true) {}`);
    expect(error.kind).toBe('cpu');
    expect(error.message).toBe('The script used up its interpreter time (an endless loop?) and was stopped.');
    expect(Number(process.hrtime.bigint() - started) / 1e6).toBeLessThan(5_000);
  });

  it('is stopped when it loops forever inside a branch after a run', async () => {
    const error = await failure(`await w.parallel([() => w.agent('a', 'b').then(() => { for (;;) {} })]);`);
    expect(error.kind).toBe('cpu');
  });

  it('fails on deep recursion', async () => {
    const error = await failure(`function down(n) { return down(n + 1) + 1; } return down(0);`);
    expect(error.kind).toBe('stack');
  });

  it.each([
    ['an array without end', `const all = []; while (true) all.push('x'.repeat(1e5) + all.length);`],
    ['a huge array', `return new Array(1e9).fill(0).length;`],
    ['a huge string', `let text = 'x'; while (true) text = text + text; `],
  ])('fails when it allocates %s', async (_what, script) => {
    const error = await failure(script);
    // Whichever bound it meets first: memory, or the time its allocations take.
    expect(['memory', 'cpu', 'threw']).toContain(error.kind);
    expect(error.message).toMatch(/memory|interpreter time|string too long/);
  });

  it.each([
    ['at the top', `await new Promise(() => {}); return 1;`],
    ['inside a branch of w.parallel', `await w.agent('a', 'b'); return w.parallel([() => w.agent('a', 'c'), () => new Promise(() => {})]);`],
  ])('fails, bounded by time, when it awaits a promise that never settles %s', async (_where, script) => {
    const error = await failure(script, { ...quick, idleMs: 50 });
    expect(error.kind).toBe('stalled');
    expect(error.message).toMatch(/never settles/);
  });

  it.each([
    ['a number', `throw 42`, 'The script threw a value that is not an Error: 42'],
    ['an object', `throw { toString() { return 'custom' } }`, 'The script threw a value that is not an Error: custom'],
    ['null', `throw null`, 'The script threw a value that is not an Error: null'],
    ['an Error', `throw new RangeError('too far')`, 'The script threw RangeError: too far'],
  ])('gets a clear error when it throws %s', async (_what, script, message) => {
    const error = await failure(script);
    expect(error.kind).toBe('threw');
    expect(error.message).toBe(message);
  });

  it.each([
    ['a function', `return () => 1`, 'it is a function'],
    ['a nested function', `return { ok: 1, run() {} }`, "'run' is a function"],
    ['a cyclic object', `const a = {}; a.self = a; return a;`, 'circular'],
    ['a BigInt', `return { n: 10n }`, "'n' is a bigint"],
  ])('gets a clear error when it returns %s', async (_what, script, message) => {
    const error = await failure(script);
    expect(error.kind).toBe('not_json');
    expect(error.message).toContain('the value returned is not JSON');
    expect(error.message).toContain(message);
  });

  it('leaves other scripts running beside it to finish', async () => {
    const { w } = fakeWorkflow();
    const [looping, fine, exhausting] = await Promise.allSettled([
      runSandboxedScript(`await w.agent('a', 'b'); while (true) {}`, w, null, quick),
      runSandboxedScript(`const parts = await w.parallel([1, 2, 3].map((n) => () => w.agent('a', String(n)))); return parts;`, w, null, quick),
      runSandboxedScript(`const all = []; while (true) all.push('x'.repeat(1e5) + all.length);`, w, null, quick),
    ]);
    expect(looping.status).toBe('rejected');
    expect(exhausting.status).toBe('rejected');
    expect(fine).toEqual({ status: 'fulfilled', value: ['a: 1', 'a: 2', 'a: 3'] });
  });
});
