/**
 * @module
 * The one JSON body reader of the backend and the emulator: reads the body as text, parses it and checks it
 * against a zod schema (zod/mini's or zod's). A problem throws a `BodyError` whose message says what is wrong, never a stack trace;
 * each app renders it in its own error envelope.
 */
import type { Context } from 'hono';
import { safeParse } from 'zod/mini';
import type { $ZodType } from 'zod/v4/core';

export class BodyError extends Error {
  override readonly name = 'BodyError';
  constructor(
    readonly status: 400 | 415,
    message: string,
  ) {
    super(message);
  }
}

export interface ReadJsonOptions {
  /** An empty body (with no Content-Type) reads as `{}`. Default false. */
  allowEmpty?: boolean;
  /** Refuse a body whose Content-Type is not application/json with 415. Default true. */
  requireJsonType?: boolean;
}

export async function readJsonBody<T>(c: Context, schema: $ZodType<T>, options: ReadJsonOptions = {}): Promise<T> {
  const { allowEmpty = false, requireJsonType = true } = options;
  const type = c.req.header('content-type') ?? '';
  const text = await c.req.text();
  const empty = text.trim() === '';
  if (allowEmpty && empty && !type) return parse(schema, {});
  if (requireJsonType && !/^application\/json\s*(;|$)/i.test(type)) {
    throw new BodyError(415, 'The request body must be application/json.');
  }
  let parsed: unknown;
  try {
    parsed = allowEmpty && empty ? {} : JSON.parse(text);
  } catch {
    throw new BodyError(400, 'The request body is not valid JSON.');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new BodyError(400, 'The request body must be a JSON object.');
  }
  return parse(schema, parsed);
}

function parse<T>(schema: $ZodType<T>, value: unknown): T {
  const result = safeParse(schema, value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const where = issue?.path.length ? `${issue.path.join('.')}: ` : '';
  const message = issue?.code === 'unrecognized_keys' ? `unknown field ${issue.keys.join(', ')}` : issue?.message;
  throw new BodyError(400, `${where}${message ?? 'invalid body'}`);
}
