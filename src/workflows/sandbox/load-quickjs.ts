import type { Intrinsics, QuickJSWASMModule } from 'quickjs-emscripten-core';

/** A QuickJS module of its own, and the language features a workflow script gets. */
export interface LoadedQuickJs {
  module: QuickJSWASMModule;
  /**
   * The default ones without `Date` (a script has no clock, so a replay repeats) and without typed
   * arrays (their buffers are not counted against the interpreter's memory limit).
   */
  intrinsics: Intrinsics;
}

/**
 * Loads QuickJS compiled to WebAssembly, in the sandbox worker only: starting cadre never pays for it. Each call makes a new WebAssembly instance (about 25 ms): a script
 * shares no interpreter memory with another, and one that broke its interpreter breaks no other.
 */
export async function loadQuickJs(): Promise<LoadedQuickJs> {
  const [{ newQuickJSWASMModuleFromVariant, DefaultIntrinsics }, variant] = await Promise.all([
    import('quickjs-emscripten-core'),
    import('@jitl/quickjs-wasmfile-release-sync'),
  ]);
  // Its types describe the CommonJS build; imported as ESM, `default` is the variant itself.
  const module = await newQuickJSWASMModuleFromVariant(variant.default as unknown as Parameters<typeof newQuickJSWASMModuleFromVariant>[0]);
  return { module, intrinsics: { ...DefaultIntrinsics, Date: false, TypedArrays: false } };
}
