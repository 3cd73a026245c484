// The backend client on its own, with a transport written here: what it sends, and what it makes of each answer.
// The suites of the element (turns, resume, history) drive it against the real backend.
import { expect } from '@open-wc/testing';
import { waitUntil } from './wait.js';
import { Backend, conversationPath } from '../../src/element/backend.js';
import { PersonaChatError } from '../../src/element/errors.js';
import { envelope } from './scripted-backend.js';

interface Seen {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: unknown;
  keepalive: boolean;
}

/**
 * A backend at a path of its own (so that no other test's session is shared), answering with `answer`; every
 * request is recorded, and `/session` hands out tokens `t1`, `t2`, ….
 */
function fake(answer: (seen: Seen) => Response | Promise<Response>) {
  const endpoint = `/fake-${crypto.randomUUID()}/`;
  const seen: Seen[] = [];
  let tokens = 0;
  const transport = async (input: RequestInfo | URL, init: RequestInit = {}) => {
    const url = new URL(String(input), location.href);
    const path = (url.pathname + url.search).replace(endpoint.slice(0, -1), '');
    const request: Seen = {
      method: init.method ?? 'GET',
      path,
      headers: (init.headers ?? {}) as Record<string, string>,
      body: typeof init.body === 'string' ? JSON.parse(init.body) : undefined,
      keepalive: init.keepalive ?? false,
    };
    seen.push(request);
    if (path === '/session') {
      const expiresAt = new Date(Date.now() + 600_000).toISOString();
      return Response.json({ token: `t${++tokens}`, expiresAt, user: { key: 'u1' }, persona: {} });
    }
    return answer(request);
  };
  const backend = new Backend({ endpoint, personaId: '', fetch: transport });
  return { backend, seen: () => seen.filter(s => s.path !== '/session'), sessions: () => tokens };
}

describe('the backend client', () => {
  it('sends the session token, and on token_expired gets a new one once and repeats the same request', async () => {
    let expired = true;
    const { backend, seen, sessions } = fake(() =>
      expired ? ((expired = false), envelope('token_expired', 401, true)) : Response.json({ id: 'c1' }),
    );
    expect(backend.base).to.match(/^\/fake-[\w-]+$/, 'the endpoint without its trailing slash');
    expect(await backend.createConversation({ page: 'shop' })).to.equal('c1');
    expect(sessions()).to.equal(2, 'a new token, once');
    expect(seen().map(s => [s.method, s.path, s.headers.authorization])).to.deep.equal([
      ['POST', '/conversations', 'Bearer t1'],
      ['POST', '/conversations', 'Bearer t2'],
    ]);
    expect(seen()[1]!.body).to.deep.equal({ metadata: { page: 'shop' } });
  });

  it('throws the error the backend said, a network failure as network_error, and a caller’s abort as an abort', async () => {
    const refused = fake(() => envelope('conversation_not_found', 404));
    const error = (await refused.backend
      .request(conversationPath('c 1'), { method: 'PATCH', body: '{"name":"Tents"}' })
      .catch((e: unknown) => e)) as PersonaChatError;
    expect(error).to.be.instanceOf(PersonaChatError);
    expect([error.code, error.retryable, error.status]).to.deep.equal(['conversation_not_found', false, 404]);
    expect(refused.seen()[0]!.path).to.equal('/conversations/c%201', 'each part of a path is encoded');

    const down = fake(() => Promise.reject(new TypeError('Failed to fetch')));
    const failure = (await down.backend.listConversations().catch(e => e)) as PersonaChatError;
    expect([failure.code, failure.retryable]).to.deep.equal(['network_error', true]);

    const controller = new AbortController();
    const held = fake(
      () =>
        new Promise<Response>((_resolve, reject) => {
          const abort = () => reject(new DOMException('The request was aborted.', 'AbortError'));
          if (controller.signal.aborted) abort();
          controller.signal.addEventListener('abort', abort);
        }),
    );
    const pending = held.backend.fetch('/conversations', { signal: controller.signal });
    await new Promise(resolve => setTimeout(resolve));
    controller.abort();
    const aborted = (await pending.catch(e => e)) as Error;
    expect(aborted.name).to.equal('AbortError');
  });

  it('reads pages of conversations until enough came, following next', async () => {
    const pages: Record<string, { data: { id: string }[]; next: string | null }> = {
      '': { data: [{ id: 'a' }, { id: 'b' }], next: 'p2' },
      p2: { data: [], next: 'p3' },
      p3: { data: [{ id: 'c' }], next: 'p4' },
    };
    const { backend, seen } = fake(s =>
      Response.json(pages[new URL(s.path, location.href).searchParams.get('cursor') ?? '']),
    );
    const list = await backend.listConversations(null, 13);
    expect(list.data.map(c => c.id)).to.deep.equal(['a', 'b', 'c']);
    expect(list.next).to.equal('p4', 'it stopped once about enough came; next goes on from there');
    expect(seen().map(s => s.path)).to.deep.equal([
      '/conversations',
      '/conversations?cursor=p2',
      '/conversations?cursor=p3',
    ]);
  });

  it('sends feedback and stops as requests that outlive the page', async () => {
    const { backend, seen } = fake(() => new Response(null, { status: 202 }));
    await backend.sendFeedback('c1', 'm/1', -1, 'Wrong size');
    backend.stop('c1', 'key-1');
    await waitUntil(() => seen().length === 2, 'the stop to be sent');
    expect(seen().map(s => [s.method, s.path, s.keepalive, s.body])).to.deep.equal([
      ['POST', '/conversations/c1/messages/m%2F1/feedback', true, { score: -1, comment: 'Wrong size' }],
      ['POST', '/conversations/c1/runs/key-1/stop', true, undefined],
    ]);
  });
});
