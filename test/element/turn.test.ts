// One turn's control on its own: it settles once, whatever comes after, and a wait on any step of it ends as soon as
// the turn is aborted.
import { expect } from '@open-wc/testing';
import { TurnHandle, abortError, isAbort, untilAborted } from '../../src/element/turn.js';
import type { ReplyResult } from '../../src/element/turn.js';

const reply: ReplyResult = { messageId: 'm1', content: 'Yes, we rent tents.', citations: [], finishReason: 'stop' };

/** A promise settled from outside, as a step of a turn (a request, a stream) is. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

describe('TurnHandle', () => {
  it('keeps what it was made with, and its signal is its controller’s', () => {
    const turn = new TurnHandle('t1', 'key-1', 'Do you rent tents?');
    expect([turn.id, turn.key, turn.text]).to.deep.equal(['t1', 'key-1', 'Do you rent tents?']);
    expect([turn.sent, turn.accepted, turn.settled, turn.recover]).to.deep.equal([false, false, false, undefined]);
    expect(turn.signal).to.equal(turn.abort.signal);
    expect(turn.signal.aborted).to.equal(false);
    turn.abort.abort();
    expect(turn.signal.aborted).to.equal(true);
  });

  it('settles once with its reply: a later reject or resolve changes nothing', async () => {
    const turn = new TurnHandle('t1', 'key-1', 'Hi');
    turn.resolve(reply);
    expect(turn.settled).to.equal(true);
    turn.reject(new Error('too late'));
    turn.resolve({ ...reply, content: 'Another reply' });
    expect(await turn.result).to.equal(reply);
  });

  it('settles once with its failure: a later resolve changes nothing', async () => {
    const turn = new TurnHandle('t1', 'key-1', 'Hi');
    const failure = new Error('failed');
    turn.reject(failure);
    expect(turn.settled).to.equal(true);
    turn.resolve(reply);
    turn.reject(new Error('another'));
    expect(await turn.result.catch((error: unknown) => error)).to.equal(failure);
  });
});

describe('untilAborted', () => {
  it('passes the result or the failure of the work through while the signal is not aborted', async () => {
    const controller = new AbortController();
    expect(await untilAborted(Promise.resolve(reply), controller.signal)).to.equal(reply);
    const failure = new Error('failed');
    expect(await untilAborted(Promise.reject(failure), controller.signal).catch((e: unknown) => e)).to.equal(failure);
  });

  it('rejects with an AbortError as soon as the signal aborts, though the work goes on', async () => {
    const controller = new AbortController();
    const work = deferred<ReplyResult>();
    const waiting = untilAborted(work.promise, controller.signal);
    controller.abort();
    const error = await waiting.catch((e: unknown) => e);
    expect(isAbort(error)).to.equal(true);
    work.resolve(reply);
    expect(await work.promise, 'the work itself ends as it would have').to.equal(reply);
  });

  it('rejects at once when the signal was aborted already', async () => {
    const work = deferred<ReplyResult>();
    const error = await untilAborted(work.promise, AbortSignal.abort()).catch((e: unknown) => e);
    expect(isAbort(error)).to.equal(true);
  });

  it('keeps the result of work that settled before the signal aborted', async () => {
    const controller = new AbortController();
    const work = deferred<ReplyResult>();
    const waiting = untilAborted(work.promise, controller.signal);
    work.resolve(reply);
    expect(await waiting).to.equal(reply);
    controller.abort();
    expect(await waiting).to.equal(reply);
  });
});

describe('isAbort', () => {
  it('tells an abort from a failure', () => {
    const made = abortError();
    expect([made.name, made.message]).to.deep.equal(['AbortError', 'The message was not sent.']);
    expect(abortError('Stopped.').message).to.equal('Stopped.');
    const controller = new AbortController();
    controller.abort();
    expect([made, controller.signal.reason, new DOMException('x', 'AbortError')].map(isAbort)).to.deep.equal([
      true,
      true,
      true,
    ]);
    const named = Object.assign(new Error('x'), { name: 'AbortError' });
    const timeout = new DOMException('x', 'TimeoutError');
    expect([named, timeout, new Error('x'), 'AbortError', undefined].map(isAbort)).to.deep.equal([
      false,
      false,
      false,
      false,
      false,
    ]);
  });
});
