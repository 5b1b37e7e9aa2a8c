import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';
import { OutputSchemaError } from './output-schema-error.ts';

/** A JSON Schema (2020-12) whose top level describes an object: what `output_schema` holds. */
export type OutputSchema = Record<string, unknown>;

/** Checks a value against an output schema: the problems found, each naming its field; empty when valid. */
export type OutputValidator = (value: unknown) => string[];

/** How many problems a repair message lists at most. */
const maxProblems = 10;

/** Compiled validators by schema text: a schema used by many runs is compiled once. */
const validators = new Map<string, OutputValidator>();
const maxCachedValidators = 200;

let shared: Ajv2020 | undefined;

/**
 * The one validator of output schemas (JSON Schema 2020-12, Ajv), made on first use so runs without
 * a schema pay nothing. Unknown keywords are annotations, as JSON Schema reads them; formats are
 * checked (`email`, `date-time`, ...).
 */
function newAjv(): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: true, strict: false, logger: false });
  // ajv-formats is CommonJS: its function is the module itself or its `default`, by loader.
  const addFormats = ((formats as unknown as { default?: unknown }).default ?? formats) as (instance: Ajv2020) => void;
  addFormats(ajv);
  return ajv;
}

/**
 * Checks that `schema` is an output schema: a JSON Schema object with `type: "object"` at the top
 * that compiles under JSON Schema 2020-12. Returns it as given.
 * @throws {OutputSchemaError} saying what is wrong, for a person or a model to fix.
 * @example checkOutputSchema({ type: 'object', properties: { title: { type: 'string' } }, required: ['title'] })
 */
export function checkOutputSchema(schema: unknown): OutputSchema {
  outputValidator(schema);
  return schema as OutputSchema;
}

/**
 * The validator of an output schema, compiled once per distinct schema.
 * @throws {OutputSchemaError} when `schema` is not an output schema (see {@link checkOutputSchema}).
 */
export function outputValidator(schema: unknown): OutputValidator {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    throw new OutputSchemaError(
      `must be a JSON Schema object, like {"type": "object", "properties": {"title": {"type": "string"}}}, not ${describeType(schema)}`,
    );
  }
  const record = schema as Record<string, unknown>;
  if (record.type !== 'object') {
    throw new OutputSchemaError(
      `the top level must be an object: set "type": "object" (it is ${record.type === undefined ? 'missing' : JSON.stringify(record.type)}), and put other values under "properties"`,
    );
  }
  const key = JSON.stringify(schema);
  const cached = validators.get(key);
  if (cached) return cached;
  const compiled = compile(record);
  const validator: OutputValidator = (value) => (compiled(value) ? [] : describeErrors(compiled.errors ?? []));
  if (validators.size >= maxCachedValidators) validators.delete(validators.keys().next().value!);
  validators.set(key, validator);
  return validator;
}

function compile(schema: Record<string, unknown>): ValidateFunction {
  shared ??= newAjv();
  try {
    return shared.compile(schema);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // A schema with an `$id` another one already took gets an Ajv of its own.
    if (/already exists/.test(message)) {
      try {
        return newAjv().compile(schema);
      } catch (again) {
        throw invalid(again);
      }
    }
    throw invalid(error);
  }
}

function invalid(error: unknown): OutputSchemaError {
  const message = (error instanceof Error ? error.message : String(error)).replace(/^schema is invalid: /, '').replace(/\bdata\//g, '/');
  return new OutputSchemaError(`is not a valid JSON Schema (2020-12): ${message}`, { cause: error });
}

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'string' ? `the text ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value)}` : `a ${typeof value}`;
}

/** Ajv's errors as lines naming the failing field (`items[0].name: must be string`). */
function describeErrors(errors: readonly ErrorObject[]): string[] {
  const lines: string[] = [];
  for (const error of errors) {
    const base = fieldPath(error.instancePath);
    const params = error.params as Record<string, unknown>;
    let line: string;
    if (error.keyword === 'required') line = `${join(base, String(params.missingProperty))}: is required`;
    else if (error.keyword === 'additionalProperties' || error.keyword === 'unevaluatedProperties')
      line = `${join(base, String(params.additionalProperty ?? params.unevaluatedProperty))}: is not allowed by the schema`;
    else if (error.keyword === 'enum') line = `${base || '(the value)'}: must be one of ${JSON.stringify(params.allowedValues)}`;
    else line = `${base || '(the value)'}: ${error.message ?? error.keyword}`;
    if (!lines.includes(line)) lines.push(line);
    if (lines.length === maxProblems) break;
  }
  return lines;
}

/** A JSON pointer (`/items/0/name`) as a field path (`items[0].name`). */
function fieldPath(pointer: string): string {
  let path = '';
  for (const raw of pointer.split('/').slice(1)) {
    const segment = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    path = /^\d+$/.test(segment) ? `${path}[${segment}]` : join(path, segment);
  }
  return path;
}

function join(base: string, key: string): string {
  return base === '' ? key : `${base}.${key}`;
}
