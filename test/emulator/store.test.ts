import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Conversation, ListResponse } from '../../src/service/types.js';
import { ada, createPersona, expectError, inProcess, juniper } from '../support/service.js';

describe('conversation lists', () => {
  it('pages 25+ conversations ten at a time, and by-user and by-persona lists never leak', async () => {
    const { request } = inProcess();
    const made: Conversation[] = [];
    for (let i = 0; i < 31; i++) {
      made.push(await createPersona(request, i % 3 === 0 ? 'alice' : 'bob', i % 2 ? ada.personaId : juniper.personaId));
    }
    const walk = async (path: string) => {
      const pages: ListResponse[] = [];
      let token: string | null | undefined;
      do {
        const res = await request('GET', token ? `${path}?continuationToken=${encodeURIComponent(token)}` : path);
        assert.equal(res.status, 200);
        const page = (await res.json()) as ListResponse;
        pages.push(page);
        token = page.continuationToken;
      } while (token);
      return pages;
    };
    const all = await walk('/conversations');
    assert.deepEqual(
      all.map(p => p.data.length),
      [10, 10, 10, 1],
    );
    assert.equal(all.at(-1)!.continuationToken, null);
    assert.deepEqual(
      all.flatMap(p => p.data.map(c => c.conversationId)),
      made.map(c => c.conversationId),
    );

    const alice = (await walk('/conversations/user/alice')).flatMap(p => p.data);
    assert.equal(alice.length, made.filter(c => c.externalUserId === 'alice').length);
    assert.ok(alice.every(c => c.externalUserId === 'alice'));
    const bob = await walk('/conversations/user/bob');
    assert.deepEqual(
      bob.map(p => p.data.length),
      [10, 10],
    );
    assert.ok(bob.flatMap(p => p.data).every(c => c.externalUserId === 'bob'));
    assert.deepEqual((await walk('/conversations/user/carol'))[0]!.data, []);

    const adas = (await walk(`/conversations/persona/${ada.personaId}`)).flatMap(p => p.data);
    assert.equal(adas.length, 15);
    assert.ok(adas.every(c => c.personaId === ada.personaId));

    const bobToken = bob[0]!.continuationToken!;
    await expectError(
      request('GET', `/conversations/user/alice?continuationToken=${bobToken}`),
      400,
      'invalid_request',
      /different list/,
    );
  });
});
