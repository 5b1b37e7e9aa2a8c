import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../errors/index.ts';
import { loadScript } from './load-script.ts';

describe('loadScript', () => {
  let directory: string;
  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'cadre-script-'));
  });
  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it('reads a YAML list of rules', async () => {
    const path = join(directory, 'script.yaml');
    await writeFile(
      path,
      ['- when: { user_includes: weather }', '  turns:', '    - tool_calls: [{ name: forecast, arguments: { city: Paris } }]', '    - text: Sunny.'].join('\n'),
    );
    expect(await loadScript(path)).toEqual([
      { when: { user_includes: 'weather' }, turns: [{ tool_calls: [{ name: 'forecast', arguments: { city: 'Paris' } }] }, { text: 'Sunny.' }] },
    ]);
  });

  it('reads JSON with a top-level `rules` key', async () => {
    const path = join(directory, 'script.json');
    await writeFile(path, JSON.stringify({ rules: [{ turns: [{ text: 'hi' }] }] }));
    expect(await loadScript(path)).toEqual([{ turns: [{ text: 'hi' }] }]);
  });

  it('throws a ConfigError naming the file and the offending field', async () => {
    const path = join(directory, 'bad.yaml');
    await writeFile(path, '- turns:\n    - text: hi\n      delay_ms: soon\n');
    const error = await loadScript(path).catch((caught: unknown) => caught);
    expect(ConfigError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain(path);
    expect((error as Error).message).toContain('delay_ms');
  });
});
