import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';

/** Stops the request with a status and a JSON body `{ error: message }`. */
export function failRequest(status: 400 | 404 | 409, message: string): never {
  throw new HTTPException(status, { message });
}

/** Reads the body as a JSON object; anything else is a 400 that says what to send. */
export async function readJsonObject(context: Context): Promise<Record<string, unknown>> {
  let body: unknown;
  try {
    body = await context.req.json();
  } catch {
    failRequest(400, 'The body is not valid JSON.');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) failRequest(400, 'The body must be a JSON object.');
  return body as Record<string, unknown>;
}

/** A required non-empty string field of a body. */
export function requiredText(body: Record<string, unknown>, field: string): string {
  const value = body[field];
  if (typeof value !== 'string' || value.trim() === '') failRequest(400, `'${field}' must be a non-empty string.`);
  return value;
}

/** An optional string field of a body; an empty string counts as absent. */
export function optionalText(body: Record<string, unknown>, field: string): string | undefined {
  const value = body[field];
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') failRequest(400, `'${field}' must be a string.`);
  return value;
}
