import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError } from '../errors/config-error.ts';
import { defineAgent } from './agent-definition.ts';
import { parseAgentFile } from './parse-agent-file.ts';

const path = '/x/.cadre/agents/counter.md';

describe("an agent's output schema", () => {
  it('reads output_schema (and Claude-style outputSchema) from front matter as YAML', () => {
    const text = [
      '---',
      'description: Counts.',
      'output_schema:',
      '  type: object',
      '  properties:',
      '    total: {type: integer}',
      '  required: [total]',
      '---',
      'Count.',
    ].join('\n');
    const result = parseAgentFile(path, text);
    expect(result).toMatchObject({ ok: true, agent: { outputSchema: { type: 'object', properties: { total: { type: 'integer' } }, required: ['total'] } } });
    expect(result.ok && result.agent.extra).toBeUndefined();
    const camel = parseAgentFile(path, ['---', 'description: Counts.', 'outputSchema: {type: object}', '---', 'Count.'].join('\n'));
    expect(camel).toMatchObject({ ok: true, agent: { outputSchema: { type: 'object' } } });
  });

  it('rejects a front-matter output_schema that is not a JSON Schema object, naming the field', () => {
    const result = parseAgentFile(path, ['---', 'description: Counts.', 'output_schema: [total]', '---', 'Count.'].join('\n'));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.field).toBe('output_schema');
    expect(result.error.message).toBe(
      `${path}: output_schema: must be a JSON Schema object, like {"type": "object", "properties": {"title": {"type": "string"}}}, not an array`,
    );
    const notObject = parseAgentFile(path, ['---', 'description: Counts.', 'output_schema: {type: string}', '---', 'Count.'].join('\n'));
    expect(!notObject.ok && notObject.error.message).toContain('output_schema: the top level must be an object');
  });

  it('takes a zod schema or JSON Schema in defineAgent, and refuses anything else with a ConfigError', () => {
    const zod = defineAgent({ name: 'counter', description: 'Counts.', outputSchema: z.object({ total: z.number().int(), note: z.string().optional() }) });
    expect(zod.outputSchema).toMatchObject({ type: 'object', properties: { total: { type: 'integer' }, note: { type: 'string' } }, required: ['total'] });
    const json = defineAgent({ name: 'counter', description: 'Counts.', outputSchema: { type: 'object', properties: { total: { type: 'number' } } } });
    expect(json.outputSchema).toEqual({ type: 'object', properties: { total: { type: 'number' } } });
    expect(() => defineAgent({ name: 'counter', description: 'Counts.', outputSchema: z.string() as never })).toThrow(
      new ConfigError(
        'Agent \'counter\': outputSchema: the top level must be an object: set "type": "object" (it is "string"), and put other values under "properties"',
      ),
    );
    expect(() => defineAgent({ name: 'counter', description: 'Counts.', outputSchema: { type: 'object', required: 'total' } })).toThrow(
      /^Agent 'counter': outputSchema: is not a valid JSON Schema \(2020-12\): \/required must be array/,
    );
  });
});
