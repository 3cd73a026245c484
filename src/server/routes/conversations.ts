/**
 * @module
 * The visitor's conversations: start one, list theirs, read one (with the replies of the replay window the service
 * does not hold yet), change its name, status, active flag or metadata, and delete it. Every route that names a
 * conversation checks first that it is the visitor's.
 */
import { Hono } from 'hono';
import * as z from 'zod/mini';
import { readJsonBody } from '../../json-body.js';
import type { ConversationDetail, ConversationList, MessageView, RunView } from '../../protocol.js';
import { ServiceError } from '../../service/errors.js';
import type { Conversation } from '../../service/types.js';
import type { Ctx, Env } from '../env.js';
import type { Parts } from '../parts.js';
import { HttpError } from '../errors.js';
import { deletedStatus, detailOf, isConversationId, isDeleted, summaryOf } from '../ownership.js';

const cursorPattern = /^[A-Za-z0-9_.~+/=%-]{1,2048}$/;

const metadataKeyRule = 'metadata keys are 1 to 64 letters, digits, _ . or -';
const withoutPage = ({ page: _, ...rest }: Record<string, string>) => rest;
const metadataSchema = z
  .record(
    z.string().check(z.regex(/^[A-Za-z0-9_.-]{1,64}$/, metadataKeyRule)),
    z
      .string({ error: 'metadata values must be strings' })
      .check(z.maxLength(500, 'metadata values must be at most 500 characters')),
    { error: issue => (issue.code === 'invalid_key' ? metadataKeyRule : 'metadata must be an object of strings') },
  )
  .check(
    // `page`, which the element adds (the path of the page a conversation starts on), is the site's beside them.
    z.refine(m => Object.keys(withoutPage(m)).length <= 20, 'metadata has at most 20 keys besides page'),
    z.refine(m => JSON.stringify(withoutPage(m)).length <= 2048, 'metadata is at most 2 KB besides page'),
  );

const createSchema = z.strictObject({ metadata: z.optional(metadataSchema) });
const patchSchema = z
  .strictObject({
    name: z.optional(
      z.string({ error: 'name must be a string' }).check(z.maxLength(100, 'name must be at most 100 characters')),
    ),
    status: z.optional(
      z.string({ error: 'status must be a string' }).check(
        z.regex(/^[A-Za-z0-9_-]{1,32}$/, 'status is 1 to 32 letters, digits, _ or -'),
        z.refine(status => status.toLowerCase() !== deletedStatus, `status "${deletedStatus}" is set by DELETE only`),
      ),
    ),
    active: z.optional(z.boolean({ error: 'active must be true or false' })),
    metadata: z.optional(metadataSchema),
  })
  .check(z.refine(body => Object.keys(body).length > 0, 'give at least one of name, status, active, metadata'));

/** A page of the list is done once it holds this many items, or this many of the service's pages were read. */
const listPages = { items: 10, service: 5 };

const badCursor = () =>
  new HttpError(400, 'invalid_request', 'cursor is not one this list gave.', { retryable: false });

/** The `:id` of the route, checked to be a conversation id. */
export function conversationId(c: Ctx): string {
  const id = c.req.param('id') ?? '';
  if (!isConversationId(id)) {
    throw new HttpError(400, 'invalid_request', 'The conversation id is malformed.', { retryable: false });
  }
  return id;
}

export function conversationRoutes({ settings, service, ownership, runs, updates, limiter }: Parts) {
  const app = new Hono<Env>();

  app.post('/conversations', async c => {
    const { sub, personaId } = c.get('user');
    const body = await readJsonBody(c, createSchema, { allowEmpty: true });
    await limiter.perMinute(`conversation:user:${sub}`, settings.limits.conversationsPerUserPerMinute);
    const signal = c.req.raw.signal;
    let conversation: Conversation;
    if (settings.general) {
      conversation = await service.createConversation({ ...settings.general, externalUserId: sub }, { signal });
    } else {
      if (!personaId || !settings.personaIds.includes(personaId)) {
        throw new HttpError(401, 'token_invalid', 'The token is for a persona this chat no longer serves.', {
          retryable: false,
        });
      }
      conversation = await service.createPersonaConversation({ personaId, externalUserId: sub }, { signal });
    }
    ownership.remember(conversation.conversationId, sub);
    if (body.metadata && Object.keys(body.metadata).length) {
      const metadata = { ...conversation.metadata, client: body.metadata };
      conversation = await service.setMetadata(conversation.conversationId, metadata, { signal });
    }
    return c.json(summaryOf(conversation), 201);
  });

  app.get('/conversations', async c => {
    const { sub, personaId } = c.get('user');
    const cursor = c.req.query('cursor');
    if (cursor !== undefined && !cursorPattern.test(cursor)) throw badCursor();
    const signal = c.req.raw.signal;
    const wanted = (conversation: Conversation) =>
      conversation.externalUserId === sub &&
      !isDeleted(conversation) &&
      (settings.general !== null || conversation.personaId === personaId);
    const mine: Conversation[] = [];
    let token = cursor;
    // The service's pages hold the user's conversations with every persona: read on while filtering leaves this
    // page short, a few pages at most, and give the service's token for where the reading stopped.
    for (let pages = 0; pages < listPages.service; pages++) {
      const page = await service.listUserConversations(sub, { continuationToken: token, signal }).catch(error => {
        // The cursor is the one thing of the caller's in this request: a forged one, or another list's.
        if (pages === 0 && cursor !== undefined && error instanceof ServiceError && [400, 422].includes(error.status)) {
          throw badCursor();
        }
        throw error;
      });
      mine.push(...(page.data ?? []).filter(wanted));
      token = page.continuationToken || undefined;
      if (!token || mine.length >= listPages.items) break;
    }
    for (const conversation of mine) ownership.rememberListed(conversation.conversationId, sub);
    const list: ConversationList = { data: mine.map(summaryOf), next: token ?? null };
    return c.json(list);
  });

  app.get('/conversations/:id', async c => {
    const { sub } = c.get('user');
    const id = conversationId(c);
    await limiter.perMinute(`conversation-read:user:${sub}`, settings.limits.conversationReadsPerUserPerMinute);
    const conversation = await ownership.check(sub, id, { signal: c.req.raw.signal, fetch: true });
    const detail = detailOf(conversation!);
    return c.json(withRuns(detail, await runs.views(detail.id, sub)));
  });

  // Changes take turns with the backend's own writes to the conversation, each reading it afresh, so that neither
  // undoes the other: the name from the first message never overwrites the visitor's, and metadata keeps both.
  app.patch('/conversations/:id', async c => {
    const id = conversationId(c);
    const body = await readJsonBody(c, patchSchema);
    const signal = c.req.raw.signal;
    const conversation = await updates.queue(id, async () => {
      const read = (await ownership.check(c.get('user').sub, id, { signal, fetch: true }))!;
      let conversation = read;
      if (body.name !== undefined) conversation = await service.setConversationName(id, body.name, { signal });
      if (body.status !== undefined) conversation = await service.setConversationStatus(id, body.status, { signal });
      if (body.active !== undefined) conversation = await service.setActive(id, body.active, { signal });
      if (body.metadata !== undefined) {
        // Onto the metadata as read (what a set-* call answers need not carry it): the backend's keys stay.
        conversation = await service.setMetadata(id, { ...read.metadata, client: body.metadata }, { signal });
      }
      return conversation;
    });
    return c.json(summaryOf(conversation));
  });

  app.delete('/conversations/:id', async c => {
    const id = conversationId(c);
    const signal = c.req.raw.signal;
    const { sub } = c.get('user');
    await updates.queue(id, async () => {
      await ownership.check(sub, id, { signal, fetch: true });
      // Its replies being written stop: nothing more is written into, or spent on, a deleted conversation.
      for (const run of await runs.views(id, sub)) {
        if (run.status === 'running') await runs.stop({ owner: sub, conversationId: id, key: run.key });
      }
      await service.setConversationStatus(id, deletedStatus, { signal });
      ownership.forget(id);
    });
    return c.body(null, 204);
  });

  return app;
}

/**
 * The conversation with the runs its messages do not hold: a finished run is held when its reply's messageId (or
 * its message and reply, word for word) is in the history, and lends its citations to that reply until they are
 * kept in the conversation's metadata. A service that keeps a message as soon as it accepts it would show it twice,
 * so trailing user messages that a listed run stands for are left to the run.
 */
export function withRuns(detail: Omit<ConversationDetail, 'runs'>, views: RunView[]): ConversationDetail {
  const messages = detail.messages;
  const held = (run: RunView) =>
    run.status === 'done' &&
    messages.some(
      (m, i) =>
        m.role === 'assistant' &&
        ((run.messageId !== null && m.id === run.messageId) ||
          (m.content === run.content && messages[i - 1]?.content === run.message)),
    );
  const runs = views.filter(run => !held(run));
  // A reply's citations reach the metadata in the background: until they do, its run in the window has them.
  const trailing: MessageView[] = messages.map(m => {
    const lends = m.role === 'assistant' && m.id !== null && !m.citations.length;
    const run = lends ? views.find(v => v.messageId === m.id) : undefined;
    return run ? { ...m, citations: run.citations } : m;
  });
  const pending = new Set(runs.map(run => run.message));
  while (trailing.at(-1)?.role === 'user' && pending.delete(trailing.at(-1)!.content)) trailing.pop();
  return { ...detail, messages: trailing, runs };
}
