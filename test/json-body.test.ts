import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Hono } from 'hono';
import { z } from 'zod';
import { BodyError, readJsonBody } from '../src/json-body.js';
import type { ReadJsonOptions } from '../src/json-body.js';

/** Reads one request's body through a real Hono context; answers what was read, or the BodyError. */
async function read(init: RequestInit, options?: ReadJsonOptions) {
  const app = new Hono();
  const schema = z.strictObject({ name: z.string().max(5, 'name is at most 5 characters').optional() });
  app.post('/', async c => c.json(await readJsonBody(c, schema, options)));
  app.onError((error, c) =>
    error instanceof BodyError ? c.json({ status: error.status, message: error.message }, 400) : c.text('bad', 500),
  );
  return (await app.fetch(new Request('http://x/', { method: 'POST', ...init }))).json();
}

const json = { 'content-type': 'application/json' };

describe('readJsonBody', () => {
  it('reads a JSON object that fits the schema', async () => {
    assert.deepEqual(await read({ headers: json, body: '{"name":"Ada"}' }), { name: 'Ada' });
  });

  it('says what is wrong with a body, never more', async () => {
    assert.deepEqual(await read({ headers: json, body: '{"name":' }), {
      status: 400,
      message: 'The request body is not valid JSON.',
    });
    assert.deepEqual(await read({ headers: json, body: '[1]' }), {
      status: 400,
      message: 'The request body must be a JSON object.',
    });
    assert.deepEqual(await read({ headers: json, body: '{"name":"Adalbert"}' }), {
      status: 400,
      message: 'name: name is at most 5 characters',
    });
    assert.deepEqual(await read({ headers: json, body: '{"other":1}' }), {
      status: 400,
      message: 'unknown field other',
    });
    assert.deepEqual(await read({ headers: { 'content-type': 'text/plain' }, body: '{}' }), {
      status: 415,
      message: 'The request body must be application/json.',
    });
  });

  it('reads an empty body as {} when allowed, and any Content-Type when asked to', async () => {
    assert.deepEqual(await read({}, { allowEmpty: true }), {});
    assert.deepEqual(await read({ body: '{"name":"Ada"}' }, { requireJsonType: false }), { name: 'Ada' });
  });
});
