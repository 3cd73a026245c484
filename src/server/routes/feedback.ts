/**
 * @module
 * Feedback on a reply: `POST /conversations/:id/messages/:messageId/feedback`. The interface has no place to write
 * feedback, so it is kept in the conversation's metadata (see `../annotations.ts`), where every device reads it back
 * with the conversation, and the site hears of it through `onFeedback`. A score of 0 takes the visitor's feedback on
 * the reply back: its entry goes from the metadata, and the site hears of that too (when there was one to take back).
 */
import { Hono } from 'hono';
import * as z from 'zod/mini';
import { readJsonBody } from '../../json-body.js';
import type { FeedbackResponse } from '../../protocol.js';
import { feedbackOf, withFeedback } from '../annotations.js';
import type { StoredFeedback } from '../annotations.js';
import { keepAliveOf } from '../env.js';
import type { Ctx, Env } from '../env.js';
import type { Parts } from '../parts.js';
import { HttpError } from '../errors.js';
import { conversationId } from './conversations.js';

/** A message id as the service gives them (UUIDs), or near enough; never one that names an object's prototype. */
const messageIdPattern = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

const feedbackSchema = z
  .strictObject({
    score: z.union([z.literal(1), z.literal(-1), z.literal(0)], { error: 'score must be 1, -1 or 0' }),
    comment: z.optional(
      z
        .string({ error: 'comment must be a string' })
        .check(z.maxLength(1000, 'comment must be at most 1,000 characters')),
    ),
    tags: z.optional(
      z
        .array(
          z
            .string({ error: 'tags must be strings' })
            .check(
              z.trim(),
              z.minLength(1, 'a tag must not be empty'),
              z.maxLength(40, 'a tag must be at most 40 characters'),
            ),
          { error: 'tags must be an array of strings' },
        )
        .check(z.maxLength(10, 'give at most 10 tags')),
    ),
  })
  .check(
    z.refine(body => body.score !== 0 || (body.comment === undefined && body.tags === undefined), {
      error: 'score 0 takes the feedback back: it has no comment or tags',
    }),
  );

const messageNotFound = () =>
  new HttpError(404, 'message_not_found', 'There is no such reply in this conversation.', { retryable: false });

function messageIdOf(c: Ctx): string {
  const id = c.req.param('messageId') ?? '';
  if (!messageIdPattern.test(id)) {
    throw new HttpError(400, 'invalid_request', 'The message id is malformed.', { retryable: false });
  }
  return id;
}

export function feedbackRoutes({ config, settings, service, ownership, updates, limiter, report }: Parts) {
  const app = new Hono<Env>();

  app.post('/conversations/:id/messages/:messageId/feedback', async c => {
    const { sub } = c.get('user');
    const id = conversationId(c);
    const messageId = messageIdOf(c);
    const body = await readJsonBody(c, feedbackSchema);
    await limiter.perMinute(`feedback:user:${sub}`, settings.limits.feedbackPerUserPerMinute);
    const signal = c.req.raw.signal;
    const comment = body.comment?.trim();
    const feedback: StoredFeedback = {
      feedbackId: crypto.randomUUID(),
      score: body.score,
      ...(comment ? { comments: comment } : {}),
      tags: [...new Set(body.tags ?? [])],
      timestamp: new Date().toISOString(),
    };
    // Read afresh and written in turn with the backend's other writes to the conversation, keeping its other keys.
    // Taking back feedback that is not kept (none given, or taken back already) writes nothing and tells no one.
    const { conversation, told } = await updates.queue(id, async () => {
      const conversation = (await ownership.check(sub, id, { signal, fetch: true }))!;
      const message = conversation.chatMessages?.find(m => m.messageId === messageId);
      if (message?.role !== 'assistant') throw messageNotFound();
      const told = body.score !== 0 || feedbackOf(conversation.metadata).has(messageId);
      if (told) {
        const kept = body.score ? feedback : undefined;
        await service.setMetadata(id, withFeedback(conversation.metadata, messageId, kept), { signal });
      }
      return { conversation, told };
    });
    if (told && config.onFeedback) {
      const event = { conversationId: id, messageId, userId: sub, personaId: conversation.personaId ?? null, feedback };
      const failed = (error: unknown) => report('the onFeedback hook failed', error);
      try {
        const done = config.onFeedback(event);
        if (done) keepAliveOf(c)(Promise.resolve(done).catch(failed));
      } catch (error) {
        failed(error);
      }
    }
    const answer: FeedbackResponse = {
      id: feedback.feedbackId,
      messageId,
      score: body.score,
      comment: feedback.comments ?? null,
      tags: feedback.tags,
      createdAt: feedback.timestamp,
    };
    return c.json(answer);
  });

  return app;
}
