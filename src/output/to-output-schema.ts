import { z } from 'zod';
import { checkOutputSchema, type OutputSchema } from './output-schema.ts';
import { OutputSchemaError } from './output-schema-error.ts';

/**
 * An output schema from what a library user gives: a JSON Schema object as it is, or a zod 4
 * schema converted to JSON Schema 2020-12 (`z.toJSONSchema`), then checked.
 * @throws {OutputSchemaError} when it is neither, or describes no object.
 * @example toOutputSchema(z.object({ title: z.string() }))
 */
export function toOutputSchema(schema: unknown): OutputSchema {
  if (typeof schema === 'object' && schema !== null && '_zod' in schema) {
    let converted: unknown;
    try {
      converted = z.toJSONSchema(schema as z.ZodType, { target: 'draft-2020-12' });
    } catch (error) {
      throw new OutputSchemaError(`the zod schema has no JSON Schema form: ${(error as Error).message}`, { cause: error });
    }
    return checkOutputSchema(converted);
  }
  if (typeof schema === 'object' && schema !== null && '_def' in schema && !('type' in schema)) {
    throw new OutputSchemaError('looks like a zod 3 schema: give a zod 4 schema (zod@4) or a JSON Schema object');
  }
  return checkOutputSchema(schema);
}
