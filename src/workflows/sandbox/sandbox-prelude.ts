/**
 * The code that runs first inside the interpreter. It takes the one host function (`outbound`)
 * off the global object into a closure, removes what would make a replay differ (Math's `random`,
 * and `Date` is never added), builds `w` out of messages to the host, and returns the one
 * function the host calls (`inbound`). Values cross as JSON text only, so no handle of either
 * side reaches the other. The host trusts none of it: a script may rewrite any built-in the
 * prelude uses, and the host checks every message it gets (`run-sandboxed-script.ts`).
 *
 * Messages to the host: `outbound(op, token, text)`, op ∈ `agent` | `parallel` | `pipeline`
 * (start an async call; its answer comes back as `deliver` with the same token), `phase` | `log`
 * (synchronous), `settle` (a thunk or stage the host invoked ended; text is `{ok, value|error}`).
 * Messages from the host: `inbound('deliver', token, text)` with text `{ok, value|error}`,
 * `inbound('invoke', token, text)` with text `{id, args}` (call a registered function),
 * `inbound('start', token, text)` with text `{script, input}`.
 */
export const sandboxPrelude = `(function () {
  'use strict';
  const outbound = globalThis.__cadre_outbound;
  delete globalThis.__cadre_outbound;
  Reflect.deleteProperty(Math, 'random');
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const AsyncFunction = (async function () {}).constructor;
  const waiting = new Map();
  const functions = new Map();
  let nextToken = 1;
  let nextFunction = 1;

  function toJson(value, what) {
    try {
      const text = stringify(value === undefined ? null : value, function (key, inner) {
        const type = typeof inner;
        if (type === 'function' || type === 'symbol' || type === 'bigint')
          throw new TypeError((key === '' ? 'it is' : "'" + key + "' is") + ' a ' + type);
        return inner;
      });
      return text === undefined ? 'null' : text;
    } catch (error) {
      throw new TypeError(what + ' is not JSON: ' + (error && error.message ? error.message : String(error)));
    }
  }
  function describe(error) {
    if (error instanceof Error) {
      const out = { name: String(error.name || 'Error'), message: String(error.message === undefined ? '' : error.message) };
      for (const key of ['run_id', 'runId', 'status', 'error', 'key']) {
        if (error[key] !== undefined) {
          try { out[key] = parse(toJson(error[key], key)); } catch (ignored) {}
        }
      }
      return out;
    }
    let text;
    try { text = String(error); } catch (ignored) { text = typeof error; }
    return { name: 'thrown value', message: text };
  }
  function revive(error) {
    const made = new Error(error.message);
    made.name = error.name;
    for (const key of ['run_id', 'runId', 'status', 'error', 'key']) if (error[key] !== undefined) made[key] = error[key];
    return made;
  }
  function settleText(ok, value) {
    if (!ok) return stringify({ ok: false, error: describe(value) });
    try {
      return '{"ok":true,"value":' + toJson(value, 'the value returned') + '}';
    } catch (error) {
      return stringify({ ok: false, error: describe(error) });
    }
  }
  function ask(op, payload) {
    const token = nextToken++;
    return new Promise(function (resolve, reject) {
      waiting.set(token, { resolve: resolve, reject: reject });
      outbound(op, token, toJson(payload, 'the arguments of w.' + op));
    });
  }
  function register(fn, what) {
    if (typeof fn !== 'function') throw new TypeError(what + ' must be a function');
    const id = nextFunction++;
    functions.set(id, fn);
    return id;
  }
  function run(token, fn, args) {
    let result;
    try {
      result = fn.apply(undefined, args);
    } catch (error) {
      outbound('settle', token, settleText(false, error));
      return;
    }
    Promise.resolve(result).then(
      function (value) { outbound('settle', token, settleText(true, value)); },
      function (error) { outbound('settle', token, settleText(false, error)); },
    );
  }

  const w = Object.freeze({
    agent: function agent(name, task, options) {
      return ask('agent', { agent: name, task: task, options: options === undefined ? null : options });
    },
    parallel: function parallel(thunks) {
      if (!Array.isArray(thunks)) return Promise.reject(new TypeError('w.parallel takes an array of functions'));
      let ids;
      try { ids = thunks.map(function (thunk, index) { return register(thunk, 'w.parallel item ' + index); }); }
      catch (error) { return Promise.reject(error); }
      return ask('parallel', { ids: ids });
    },
    pipeline: function pipeline(items) {
      const stages = Array.prototype.slice.call(arguments, 1);
      if (!Array.isArray(items)) return Promise.reject(new TypeError('w.pipeline takes an array of items, then functions'));
      let ids;
      try { ids = stages.map(function (stage, index) { return register(stage, 'w.pipeline stage ' + (index + 1)); }); }
      catch (error) { return Promise.reject(error); }
      return ask('pipeline', { items: items, ids: ids });
    },
    phase: function phase(name) { outbound('phase', 0, toJson(String(name), 'the phase')); },
    log: function log(text) { outbound('log', 0, toJson(String(text), 'the log line')); },
  });

  return function inbound(op, token, text) {
    const message = parse(text);
    if (op === 'deliver') {
      const entry = waiting.get(token);
      if (!entry) return;
      waiting.delete(token);
      if (message.ok) entry.resolve(message.value);
      else entry.reject(revive(message.error));
    } else if (op === 'invoke') {
      const fn = functions.get(message.id);
      if (!fn) outbound('settle', token, settleText(false, new Error('no such function')));
      else run(token, fn, message.args);
    } else if (op === 'start') {
      let main;
      try {
        main = new AsyncFunction('w', 'input', message.script);
      } catch (error) {
        outbound('settle', token, settleText(false, error));
        return;
      }
      run(token, main, [w, message.input]);
    }
  };
})()`;
