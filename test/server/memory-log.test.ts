import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryLog } from '../../src/server/memory-log.js';

const delta = (text: string) => JSON.stringify({ text });

describe('MemoryLog', () => {
  it('gives the events back exactly as appended, with ids of their attempt and place', () => {
    const log = new MemoryLog(2);
    const appended: [string, string][] = [
      ['delta', delta('Hello ')],
      ['delta', delta('"quoted" \\ and \n escaped ')],
      ['delta', delta('')],
      ['citations', JSON.stringify({ citations: [{ title: 'x' }] })],
      ['delta', '{"text":"a","other":"b"}'],
      ['delta', '{"text":"}'],
      ['done', JSON.stringify({ messageId: 'm', runId: null, finishReason: 'stop' })],
    ];
    const ids = appended.map(([event, data]) => log.append(event, data));
    assert.deepEqual(ids, ['2-1', '2-2', '2-3', '2-4', '2-5', '2-6', '2-7']);
    const expected = appended.map(([event, data], i) => ({ id: `2-${i + 1}`, event, data, attempt: 2 }));
    assert.deepEqual(log.after(0), expected);
    assert.deepEqual(log.after(4), expected.slice(4));
    assert.deepEqual(log.after(7), []);
    assert.deepEqual(log.last(), expected.at(-1));
    log.seal();
    assert.deepEqual(log.after(0), expected, 'the same once packed');
    assert.equal(log.length, 7);
  });

  it('keeps many pieces in order across its joins, and takes more after being packed', () => {
    const log = new MemoryLog(1);
    const words = Array.from({ length: 100 }, (_, i) => `word${i} `);
    for (const word of words) log.append('delta', delta(word));
    assert.equal(
      log
        .after(0)
        .map(e => (JSON.parse(e.data) as { text: string }).text)
        .join(''),
      words.join(''),
    );
    assert.deepEqual(
      log.after(97).map(e => e.id),
      ['1-98', '1-99', '1-100'],
    );
    log.seal();
    log.append('delta', delta('more'));
    assert.deepEqual(log.last(), { id: '1-101', event: 'delta', data: delta('more'), attempt: 1 });
    assert.equal(log.after(99)[0]!.data, delta('word99 '));
  });

  it('gives what follows every place the same, from the latest pieces or from the joined ones', () => {
    const log = new MemoryLog(3);
    const appended: [string, string][] = [];
    const add = (event: string, data: string) => {
      log.append(event, data);
      appended.push([event, data]);
    };
    const expected = () => appended.map(([event, data], i) => ({ id: `3-${i + 1}`, event, data, attempt: 3 }));
    const check = (when: string) => {
      for (let count = 0; count <= appended.length; count++)
        assert.deepEqual(log.after(count), expected().slice(count), `after ${count}, ${when}`);
    };
    add('meta', '{"conversationId":"c"}');
    for (let i = 0; i < 70; i++) {
      add('delta', delta(`w${i} `));
      if (i % 25 === 24) add('citations', `{"n":${i}}`);
    }
    check('under way');
    log.seal();
    check('packed');
    add('delta', delta('after'));
    add('done', '{}');
    check('appended to once packed');
  });

  it('numbers its events from the place it is told, as a log that starts where the stream’s ids do', () => {
    const log = new MemoryLog(4, 0);
    assert.deepEqual([log.append('meta', '{}'), log.append('delta', delta('a'))], ['4-0', '4-1']);
    assert.deepEqual(log.after(1), [{ id: '4-1', event: 'delta', data: delta('a'), attempt: 4 }]);
    assert.equal(log.first, 0);
  });

  it('is empty at first', () => {
    const log = new MemoryLog(1);
    assert.equal(log.last(), undefined);
    assert.deepEqual(log.after(0), []);
  });
});
