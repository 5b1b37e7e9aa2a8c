import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { ConfigError } from '../errors/index.ts';
import { parseScript, type Script } from './script.ts';

/**
 * Reads and validates a script from a `.json`, `.yaml` or `.yml` file.
 * @throws {ConfigError} naming the file and the offending field
 * @example
 * const script = await loadScript('test/fixtures/research.yaml');
 */
export async function loadScript(path: string): Promise<Script> {
  const source = await readFile(path, 'utf8');
  let value: unknown;
  try {
    value = path.endsWith('.json') ? JSON.parse(source) : parseYaml(source);
  } catch (error) {
    throw new ConfigError(`Script ${path} is not valid ${path.endsWith('.json') ? 'JSON' : 'YAML'}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  try {
    return parseScript(value);
  } catch (error) {
    if (!(error instanceof z.ZodError)) throw error;
    throw new ConfigError(`Script ${path} is invalid:\n${z.prettifyError(error)}`, { cause: error });
  }
}
