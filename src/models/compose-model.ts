import type { LanguageModel } from 'ai';

/** A model call's options, of any specification version the AI SDK accepts (v2 to v4). */
export interface ModelCallOptions {
  abortSignal?: AbortSignal;
  [key: string]: unknown;
}

/** A part of a model's stream, of any specification version. */
export interface StreamPart {
  type: string;
  [key: string]: unknown;
}

/** A content part of an unstreamed answer. */
export interface ContentPart {
  type: string;
  text?: string;
  input?: string;
  [key: string]: unknown;
}

/** What cadre reads of an unstreamed answer (`doGenerate`), any specification version. */
export interface GenerateResult {
  content: ContentPart[];
  [key: string]: unknown;
}

/** What cadre reads of a streamed answer (`doStream`), any specification version. */
export interface StreamResult {
  stream: ReadableStream<StreamPart>;
  [key: string]: unknown;
}

/**
 * What the model stack relies on in a model object of any specification version the SDK accepts:
 * its identity and its two calls.
 */
export interface ModelObject {
  specificationVersion: string;
  provider: string;
  modelId: string;
  supportedUrls: unknown;
  doGenerate(options: ModelCallOptions): PromiseLike<GenerateResult>;
  doStream(options: ModelCallOptions): PromiseLike<StreamResult>;
}

/** What an entry's `wrapGenerate` and `wrapStream` are given: the AI SDK's middleware arguments. */
export interface ModelCallContext {
  /** Calls the rest of the stack (the entries after this one, then the model) with `params`. */
  doGenerate: () => PromiseLike<GenerateResult>;
  /** Calls the rest of the stack's stream with `params`. */
  doStream: () => PromiseLike<StreamResult>;
  params: ModelCallOptions;
  /** The rest of the stack as a model: call it with other options (an attempt's own abort signal). */
  model: ModelObject;
}

/**
 * One entry of a model's middleware, in the shape of the AI SDK's `LanguageModelMiddleware`
 * (`wrapLanguageModel`): it may transform the call's options and wrap the unstreamed and the
 * streamed call. Entries are plain objects, made once per model (state that belongs to the model,
 * such as its attempt controller, lives in the entry) or once per loop (watchers).
 */
export interface ModelMiddleware {
  transformParams?: (options: { type: 'generate' | 'stream'; params: ModelCallOptions; model: ModelObject }) => PromiseLike<ModelCallOptions>;
  wrapGenerate?: (options: ModelCallContext) => PromiseLike<GenerateResult>;
  wrapStream?: (options: ModelCallContext) => PromiseLike<StreamResult>;
}

/** Where a composed model keeps what it was composed of, so composing it again adds entries instead of a layer. */
const composition = Symbol.for('cadre.composed-model');

interface Composition {
  base: ModelObject;
  middleware: readonly ModelMiddleware[];
  /** The stack's outermost layer: composing again builds only the new entries' layers on it. */
  outer: ModelObject;
}

/** The model and entries `model` was composed of, when it came from {@link composeModel}. */
export function compositionOf(model: unknown): Composition | undefined {
  return (model as Record<symbol, Composition | undefined> | null)?.[composition];
}

/**
 * The model with `middleware` around it, the first entry outermost (as `wrapLanguageModel` orders
 * them): every concern around a model call (retries and timeouts, redaction, usage, text) is one
 * entry of this one stack. Composing a composed model again puts the new entries outside the old
 * ones on the same stack, with the same entry objects and layers: a loop's watchers join the
 * model's stack instead of wrapping it. Unlike `wrapLanguageModel`, the stack is built once per
 * composition and adds no promise of its own per entry: an entry without `transformParams` costs
 * one call.
 * @example composeModel(model, [watchModelUsage(onUsage), reliableCalls({ redactor })])
 */
export function composeModel(model: LanguageModel, middleware: readonly ModelMiddleware[]): LanguageModel {
  if (typeof model === 'string' || middleware.length === 0) return model;
  const composed = compositionOf(model);
  const base = composed?.base ?? (model as unknown as ModelObject);
  const entries = composed === undefined ? middleware : [...middleware, ...composed.middleware];
  let inner: ModelObject = composed?.outer ?? base;
  for (let index = middleware.length - 1; index >= 0; index--) inner = layer(base, inner, middleware[index]);
  const outer = inner;
  const result = identityOf(base, {
    doGenerate(params: ModelCallOptions) {
      try {
        return outer.doGenerate(params);
      } catch (error) {
        // A model that throws instead of rejecting: callers see a rejection either way.
        return Promise.reject(error);
      }
    },
    doStream(params: ModelCallOptions) {
      try {
        return outer.doStream(params);
      } catch (error) {
        return Promise.reject(error);
      }
    },
  });
  Object.defineProperty(result, composition, { value: { base, middleware: entries, outer } satisfies Composition });
  return result as unknown as LanguageModel;
}

/** `inner` with `entry` around it, as a model object. */
function layer(base: ModelObject, inner: ModelObject, entry: ModelMiddleware): ModelObject {
  const { transformParams, wrapGenerate, wrapStream } = entry;
  if (transformParams === undefined && wrapGenerate === undefined && wrapStream === undefined) return inner;
  const generate = wrapGenerate
    ? (params: ModelCallOptions) => wrapGenerate({ doGenerate: () => inner.doGenerate(params), doStream: () => inner.doStream(params), params, model: inner })
    : (params: ModelCallOptions) => inner.doGenerate(params);
  const stream = wrapStream
    ? (params: ModelCallOptions) => wrapStream({ doGenerate: () => inner.doGenerate(params), doStream: () => inner.doStream(params), params, model: inner })
    : (params: ModelCallOptions) => inner.doStream(params);
  if (transformParams === undefined) return identityOf(base, { doGenerate: generate, doStream: stream });
  return identityOf(base, {
    doGenerate: (params) => Promise.resolve(transformParams({ type: 'generate', params, model: inner })).then(generate),
    doStream: (params) => Promise.resolve(transformParams({ type: 'stream', params, model: inner })).then(stream),
  });
}

/** A model object with `base`'s identity (its supported URLs read when asked) and the given calls. */
function identityOf(base: ModelObject, calls: Pick<ModelObject, 'doGenerate' | 'doStream'>): ModelObject {
  return {
    specificationVersion: base.specificationVersion,
    provider: base.provider,
    modelId: base.modelId,
    get supportedUrls() {
      return base.supportedUrls;
    },
    doGenerate: calls.doGenerate,
    doStream: calls.doStream,
  };
}
