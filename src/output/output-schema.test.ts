import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createOutputCapture } from './output-capture.ts';
import { checkOutputSchema, outputValidator } from './output-schema.ts';
import { OutputSchemaError } from './output-schema-error.ts';
import { toOutputSchema } from './to-output-schema.ts';

const schema = {
  type: 'object',
  properties: {
    title: { type: 'string', minLength: 1 },
    items: { type: 'array', items: { type: 'object', properties: { id: { type: 'integer' }, mail: { type: 'string', format: 'email' } }, required: ['id'] } },
    level: { enum: ['low', 'high'] },
  },
  required: ['title'],
  additionalProperties: false,
};

describe('output schemas', () => {
  it('names each failing field, nested ones by path, with formats checked', () => {
    const validate = outputValidator(schema);
    expect(validate({ title: 'ok', items: [{ id: 1, mail: 'a@b.example' }], level: 'low' })).toEqual([]);
    expect(validate({ items: [{ id: 'one' }, { mail: 'nope' }], level: 'mid', extra: 1 })).toEqual([
      'title: is required',
      'extra: is not allowed by the schema',
      'items[0].id: must be integer',
      'items[1].id: is required',
      'items[1].mail: must match format "email"',
      'level: must be one of ["low","high"]',
    ]);
    expect(validate([])).toEqual(['(the value): must be object']);
  });

  it('refuses what is not a JSON Schema object with an OutputSchemaError saying what to fix', () => {
    expect(() => checkOutputSchema('{"type":"object"}')).toThrow(OutputSchemaError);
    expect(() => checkOutputSchema(['a'])).toThrow(/must be a JSON Schema object, .* not an array$/);
    expect(() => checkOutputSchema({ properties: {} })).toThrow('the top level must be an object: set "type": "object" (it is missing)');
    expect(() => checkOutputSchema({ type: 'object', properties: { a: { type: 'text' } } })).toThrow(
      /^is not a valid JSON Schema \(2020-12\): \/properties\/a\/type/,
    );
    expect(checkOutputSchema(schema)).toBe(schema);
  });

  it('compiles schemas that share an $id', () => {
    const first = outputValidator({ $id: 'https://example.com/result', type: 'object', required: ['a'] });
    const second = outputValidator({ $id: 'https://example.com/result', type: 'object', required: ['b'] });
    expect(first({ b: 1 })).toEqual(['a: is required']);
    expect(second({ b: 1 })).toEqual([]);
  });

  it('converts a zod 4 schema to JSON Schema 2020-12', () => {
    expect(toOutputSchema(z.object({ n: z.number() }))).toEqual({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { n: { type: 'number' } },
      required: ['n'],
      additionalProperties: false,
    });
  });
});

describe('the output capture', () => {
  it('judges the last final_result call before the text, and a final text only when it is a JSON object alone', async () => {
    const capture = createOutputCapture(schema);
    expect(capture.judge('{"title": "t"}', '{"title": "t"}')).toEqual({ ok: true, value: { title: 't' }, text: '{\n  "title": "t"\n}' });
    expect(capture.judge('  ', 'earlier words')).toMatchObject({
      ok: false,
      problem: expect.stringContaining('no call of final_result and no final text'),
      lastText: 'earlier words',
    });
    expect(capture.judge('Here: {"title": "t"}', 'x')).toMatchObject({ ok: false, problem: expect.stringContaining('not a JSON object') });
    expect(capture.judge('{"title": ', 'x')).toMatchObject({ ok: false, problem: expect.stringContaining('not valid JSON alone') });
    const execute = capture.tool.execute as (input: unknown, options: unknown) => Promise<string>;
    expect(await execute({ title: '' }, {})).toBe('Not accepted: title: must NOT have fewer than 1 characters. A message follows with what to fix.');
    expect(capture.called()).toBe(true);
    expect(capture.judge('{"title": "from text"}', '')).toEqual({
      ok: false,
      problem: 'The value you gave final_result does not match the schema: title: must NOT have fewer than 1 characters.',
      lastText: '{\n  "title": ""\n}',
    });
    expect(await execute({ title: 'fixed' }, {})).toBe('Accepted: your result is recorded and your run ends here.');
    expect(capture.judge('', '')).toMatchObject({ ok: true, value: { title: 'fixed' } });
    capture.nextAttempt();
    expect(capture.called()).toBe(false);
    expect(capture.repairMessage('Something is wrong.')).toContain('Something is wrong.\nGive your result now: call final_result');
  });
});
