import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as ai from 'ai';
import { ConfigError } from '../errors/config-error.ts';

/** The AI SDK majors cadre is tested with (the `ai` package). */
export const supportedAiSdkMajors: readonly number[] = [7];

/**
 * Throws a {@link ConfigError} unless the `ai` package cadre resolves (the app's own, since `ai`
 * is a peer dependency) is AI SDK 7: tools and stream parts made for another major would fail in
 * odd ways inside the app's loop instead.
 */
export function requireAiSdk7(what: string): void {
  const problem = aiSdkProblem(ai as Record<string, unknown>, installedAiVersion);
  if (problem) throw new ConfigError(`${what} ${problem}`);
}

/**
 * What is wrong with an `ai` package's exports for cadre, or null when they are AI SDK 7's. Told
 * apart by what 7 added (`isStepCount`, `toUIMessageStream`), so it works however the package was
 * installed; the version is read only to say which one was found.
 */
export function aiSdkProblem(exports: Record<string, unknown>, version: () => string | null): string | null {
  if (typeof exports.isStepCount === 'function' && typeof exports.toUIMessageStream === 'function') return null;
  const found = version();
  return `needs AI SDK 7 (the 'ai' package ${supportedAiSdkMajors.map((major) => `${major}.x`).join(' or ')}); this app has 'ai' ${found ?? 'of an older major'}. Upgrade with: npm install ai@^7`;
}

/** The version of the `ai` package cadre resolves, when its package.json can be read. */
function installedAiVersion(): string | null {
  try {
    const entry = fileURLToPath(import.meta.resolve('ai'));
    const root = entry.slice(0, entry.lastIndexOf('/node_modules/ai/') + '/node_modules/ai/'.length);
    return (JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { version?: string }).version ?? null;
  } catch {
    return null;
  }
}
