import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ConfigError } from '../errors/config-error.ts';
import type { WorkflowScript, WorkflowSource } from './workflow-api.ts';

/** A workflow file loaded: its default export and the source kept with the workflow. */
export interface LoadedWorkflowFile {
  script: WorkflowScript;
  source: Extract<WorkflowSource, { kind: 'file' }>;
}

async function importScript(url: string, label: string): Promise<WorkflowScript> {
  let module: { default?: unknown };
  try {
    module = (await import(url)) as { default?: unknown };
  } catch (error) {
    throw new ConfigError(`The workflow file ${label} cannot be loaded: ${(error as Error).message}`, { cause: error });
  }
  if (typeof module.default !== 'function') {
    throw new ConfigError(`The workflow file ${label} has no default export function: write export default async function (w, input) { ... }.`);
  }
  return module.default as WorkflowScript;
}

/**
 * Loads a workflow file: an ES module (`.js`, `.mjs`; `.ts` where Node strips types) whose default
 * export is `(w, input) => ...`. Its text is kept with the workflow, so a replay runs the same script.
 */
export async function loadWorkflowFile(path: string): Promise<LoadedWorkflowFile> {
  const absolute = resolve(path);
  let text: string;
  try {
    text = await readFile(absolute, 'utf8');
  } catch (error) {
    throw new ConfigError(`Cannot read the workflow file ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, { cause: error });
  }
  return { script: await importScript(pathToFileURL(absolute).href, path), source: { kind: 'file', path: absolute, text } };
}

/**
 * The script of a stored file workflow: the file itself while its text is the one stored (its
 * relative imports work), else the stored text (a module of its own, without relative imports).
 */
export async function loadStoredWorkflowFile(source: Extract<WorkflowSource, { kind: 'file' }>): Promise<WorkflowScript> {
  const current = await readFile(source.path, 'utf8').catch(() => null);
  if (current === source.text) return importScript(pathToFileURL(source.path).href, source.path);
  return importScript(`data:text/javascript;base64,${Buffer.from(source.text).toString('base64')}`, `${source.path} (as stored when it started)`);
}
