import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Hono } from 'hono';
import { keepAliveOf, noteExecutionCtx } from '../../src/server/env.js';
import type { Env } from '../../src/server/env.js';

describe('keepAliveOf', () => {
  const work = Promise.resolve('written');
  const app = new Hono<Env>().get('/', c => {
    keepAliveOf(c)(work);
    return c.text('ok');
  });

  it('hands the work to waitUntil when the request came with an execution context (Workers)', async () => {
    const kept: Promise<unknown>[] = [];
    const executionCtx = {
      waitUntil: (p: Promise<unknown>) => void kept.push(p),
      passThroughOnException() {},
      props: {},
    };
    const request = new Request('http://backend.test/');
    noteExecutionCtx(request, executionCtx);
    const res = await app.fetch(request, undefined, executionCtx);
    assert.equal(res.status, 200);
    assert.deepEqual(kept, [work], 'the work went to waitUntil');
  });

  it('leaves the work to the process when there is none (Node)', async () => {
    const request = new Request('http://backend.test/');
    noteExecutionCtx(request, undefined);
    const res = await app.fetch(request);
    assert.equal(res.status, 200, 'no error for the missing context');
  });
});
