/**
 * What cadre relies on in a model object of any specification version the AI SDK accepts (v2 to
 * v4): its identity and its two calls. Each wrapper names the parts of the results it reads.
 */
export interface ModelObject<GenerateResult = unknown, StreamResult = unknown> {
  specificationVersion: string;
  provider: string;
  modelId: string;
  supportedUrls: unknown;
  doGenerate(options: any): PromiseLike<GenerateResult>;
  doStream(options: any): PromiseLike<StreamResult>;
}

/**
 * A model object that is `inner` with some of its calls replaced: the identity (specification
 * version, provider, model id, supported URLs) is forwarded, and so is each call not given.
 * @example forwardModel(inner, { doGenerate: async (options) => log(await inner.doGenerate(options)) })
 */
export function forwardModel<MODEL extends ModelObject<any, any>>(inner: MODEL, calls: Partial<Pick<MODEL, 'doGenerate' | 'doStream'>>): MODEL {
  return {
    specificationVersion: inner.specificationVersion,
    provider: inner.provider,
    modelId: inner.modelId,
    get supportedUrls() {
      return inner.supportedUrls;
    },
    doGenerate: calls.doGenerate ?? ((options: unknown) => inner.doGenerate(options)),
    doStream: calls.doStream ?? ((options: unknown) => inner.doStream(options)),
  } as MODEL;
}
