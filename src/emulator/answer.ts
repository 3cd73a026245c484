/**
 * @module
 * How the emulator answers a continue: it plans a reply, writes it in the asked delivery, applies the stream
 * faults, and stores the run (the user's message and the reply) only once the reply is complete, so an aborted or
 * cut reply leaves nothing behind.
 */
import type { ChatMessage, Conversation, Usage } from '../service/types.js';
import { countTokens } from './engine.js';
import type { Faults } from './faults.js';
import { chatResponse, deltaChunk, finalChunk, frameFor, streamContentType } from './format.js';
import type { Delivery, RunIds } from './format.js';
import { sleep } from './replies.js';
import type { ReplyPlan } from './replies.js';
import type { ConversationStore } from './store.js';

export interface AnswerContext {
  conversation: Conversation;
  message: string;
  delivery: Delivery;
  requestId: string;
  /** The request's signal: the client going away ends the reply. */
  signal: AbortSignal;
  plan: (signal: AbortSignal) => Promise<ReplyPlan>;
  store: ConversationStore;
  faults: Faults;
}

export async function answer(context: AnswerContext): Promise<Response> {
  const { conversation, message, delivery, requestId, faults } = context;
  const abort = new AbortController();
  context.signal.addEventListener('abort', () => abort.abort(context.signal.reason), { once: true });
  const ids: RunIds = {
    runId: crypto.randomUUID(),
    messageId: crypto.randomUUID(),
    requestId,
    created: Math.floor(Date.now() / 1000),
    model: conversation.model ?? '',
  };
  const plan = await context.plan(abort.signal);
  const usageOf = (text: string): Usage => {
    const completion = countTokens(text);
    return {
      prompt_tokens: plan.promptTokens,
      completion_tokens: completion,
      total_tokens: plan.promptTokens + completion,
    };
  };
  const commit = (text: string, usage: Usage) =>
    context.store.appendRun(conversation, runMessages(ids, message, text, usage, plan.promptTokens));

  if (delivery === 'json') {
    let text = '';
    for await (const piece of plan.pieces) text += piece;
    const usage = usageOf(text);
    commit(text, usage);
    return Response.json(chatResponse(ids, text, usage, plan.citations));
  }

  const frame = frameFor(delivery);
  const cutAfter = faults.takeCut();
  const encoder = new TextEncoder();

  async function* frames(): AsyncGenerator<string> {
    let text = '';
    let sent = 0;
    const send = async (data: unknown) => {
      if (cutAfter !== undefined && sent >= cutAfter) {
        // Let what was already written reach the client, as it would before a connection drops.
        await sleep(25);
        throw new Error('stream cut by an injected fault');
      }
      sent++;
      return frame(data);
    };
    for await (const piece of plan.pieces) {
      const { chunkDelayMs } = faults.settings;
      if (chunkDelayMs) await sleep(chunkDelayMs, abort.signal);
      yield await send(deltaChunk(ids, piece, !text));
      text += piece;
    }
    const usage = usageOf(text);
    const last = await send(finalChunk(ids, usage, plan.citations));
    commit(text, usage);
    yield last;
    if (delivery === 'sse') yield await send('[DONE]');
  }

  const iterator = frames();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const next = await iterator.next();
        if (next.done) controller.close();
        else controller.enqueue(encoder.encode(next.value));
      } catch (error) {
        controller.error(error);
      }
    },
    async cancel(reason) {
      abort.abort(reason);
      await iterator.return(undefined).catch(() => {});
    },
  });
  return new Response(body, {
    headers: { 'content-type': streamContentType(delivery), 'cache-control': 'no-cache', 'x-request-id': requestId },
  });
}

/** The two messages a finished run adds: the user's, and the reply, with token counts that add up. */
function runMessages(ids: RunIds, message: string, text: string, usage: Usage, promptTokens: number): ChatMessage[] {
  const userTokens = countTokens(message);
  const now = new Date().toISOString();
  const base = { toolCallId: null, name: null, timestamp: now, feedbacks: [], conversationRunId: ids.runId };
  const contextTokens = promptTokens - userTokens;
  return [
    {
      ...base,
      role: 'user',
      content: message,
      messageId: crypto.randomUUID(),
      promptTokens: userTokens,
      completionTokens: 0,
      totalTokens: userTokens,
    },
    {
      ...base,
      role: 'assistant',
      content: text,
      messageId: ids.messageId,
      promptTokens: contextTokens,
      completionTokens: usage.completion_tokens,
      totalTokens: contextTokens + usage.completion_tokens,
    },
  ];
}
