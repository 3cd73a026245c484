// The element's one error type: what it makes of the backend's answers (the real backend's, mounted at /persona-chat,
// and answers of what may stand in front of it, written here) and of a network that fails.
import { expect } from '@open-wc/testing';
import { csrfHeader } from '../../src/protocol.js';
import { PersonaChatError, errorFromResponse, networkError } from '../../src/element/errors.js';

const json = { 'content-type': 'application/json' };

describe('errorFromResponse', () => {
  it('reads the code and retryable flag of the backend’s error envelope, never its text', async () => {
    const missing = await fetch('/persona-chat/conversations');
    const error = await errorFromResponse(missing);
    expect(error).to.be.instanceOf(PersonaChatError).and.instanceOf(Error);
    expect([error.name, error.code, error.retryable, error.status]).to.deep.equal([
      'PersonaChatError',
      'token_missing',
      false,
      401,
    ]);
    expect(error.message).to.contain('401').and.contain('token_missing');
    expect(error.message, 'the server’s own words').not.to.contain('A token is required');

    const unknown = await fetch('/persona-chat/session', {
      method: 'POST',
      headers: { ...json, [csrfHeader]: '1' },
      body: JSON.stringify({ personaId: crypto.randomUUID() }),
    });
    const refused = await errorFromResponse(unknown);
    expect([refused.code, refused.retryable, refused.status]).to.deep.equal(['invalid_request', false, 400]);
    expect(refused.message).not.to.contain('persona');

    const forged = await fetch('/persona-chat/session', { method: 'POST', headers: json, body: '{}' });
    const forbidden = await errorFromResponse(forged);
    expect([forbidden.code, forbidden.retryable, forbidden.status]).to.deep.equal(['origin_not_allowed', false, 403]);
  });

  it('takes the envelope’s retryable flag over what the status would say', async () => {
    const envelope = (code: string, retryable: boolean, status: number) =>
      Response.json({ error: { code, message: 'Details.', retryable, requestId: 'r1' } }, { status });
    const final = await errorFromResponse(envelope('upstream_unavailable', false, 503));
    expect([final.code, final.retryable, final.status]).to.deep.equal(['upstream_unavailable', false, 503]);
    const again = await errorFromResponse(envelope('token_expired', true, 401));
    expect([again.code, again.retryable, again.status]).to.deep.equal(['token_expired', true, 401]);
  });

  it('reads an answer without an envelope by its status: a 5xx did not reach the backend, a 429 is retryable', async () => {
    // What a proxy, a load balancer or a web server in front of the backend might answer.
    const cases: [Response, string, boolean][] = [
      [new Response('Not Found', { status: 404, headers: { 'content-type': 'text/plain' } }), 'bad_response', false],
      [new Response('<html><h1>502 Bad Gateway</h1></html>', { status: 502 }), 'network_error', true],
      [new Response(null, { status: 503 }), 'network_error', true],
      [Response.json({ message: 'Internal error' }, { status: 500 }), 'network_error', true],
      [new Response('Too Many Requests', { status: 429 }), 'bad_response', true],
      [Response.json(null, { status: 400 }), 'bad_response', false],
      [Response.json({ error: 'oops' }, { status: 403 }), 'bad_response', false],
    ];
    for (const [response, code, retryable] of cases) {
      const { status } = response;
      const error = await errorFromResponse(response);
      expect([error.code, error.retryable, error.status], String(status)).to.deep.equal([code, retryable, status]);
      expect(error.message, 'no raw server text').not.to.match(/Found|Gateway|Internal|Too Many|oops/);
    }
  });
});

describe('networkError', () => {
  it('is a retryable network_error without a status, saying why the backend could not be reached', async () => {
    // Browsers refuse to connect to port 1: fetch fails there as it does when the network is down.
    const failure = await fetch('http://127.0.0.1:1/persona-chat/session').catch((error: unknown) => error);
    expect(failure).to.be.instanceOf(TypeError);
    const error = networkError(failure);
    expect(error).to.be.instanceOf(PersonaChatError);
    expect([error.code, error.retryable, error.status]).to.deep.equal(['network_error', true, undefined]);
    expect(error.message).to.contain((failure as TypeError).message);
    expect(networkError('offline').message).to.contain('offline');
    expect(networkError(undefined).message).to.contain('undefined');
  });
});

describe('PersonaChatError', () => {
  it('keeps its code, retryable flag and status', () => {
    const error = new PersonaChatError('stream_incomplete', 'The reply ended early.', true, 200);
    expect([error.name, error.message, error.code, error.retryable, error.status]).to.deep.equal([
      'PersonaChatError',
      'The reply ended early.',
      'stream_incomplete',
      true,
      200,
    ]);
    expect(new PersonaChatError('config_error', 'No endpoint.', false).status).to.equal(undefined);
  });
});
