/**
 * @module
 * How the emulator writes a reply on the wire, in the OpenAI style the interface's gaps are filled with: a whole
 * Chat response for the complete-response delivery, `chat.completion.chunk` objects for the streams (as SSE
 * `data:` lines ending with `[DONE]`, or as newline-delimited JSON over HTTP/2).
 */
import type { ChatResponse, Citation, ModerationResult, Usage } from '../service/types.js';

export type Delivery = 'json' | 'sse' | 'http2';

export const noModeration: ModerationResult = {
  categoryResults: ['hate', 'self_harm', 'sexual', 'violence'].map(category => ({
    category,
    filtered: false,
    severity: 'safe',
  })),
};

/** What identifies one run of a conversation on the wire. */
export interface RunIds {
  runId: string;
  messageId: string;
  requestId: string;
  /** Unix seconds. */
  created: number;
  model: string;
}

/** The body of a complete-response continue. */
export function chatResponse(ids: RunIds, text: string, usage: Usage, citations: Citation[]): ChatResponse {
  return {
    id: `chatcmpl-${ids.runId}`,
    object: 'chat.completion',
    created: ids.created,
    usage,
    choices: [
      {
        finish_reason: 'stop',
        index: 0,
        message: { role: 'assistant', content: text, toolCallId: null, name: null },
        moderation_results: noModeration,
      },
    ],
    messageId: ids.messageId,
    runId: ids.runId,
    httpRequestId: ids.requestId,
    citations,
    prompt_moderations: noModeration,
  };
}

/** One streamed piece of the reply; the first carries the role. */
export function deltaChunk(ids: RunIds, piece: string, first: boolean) {
  return chunk(ids, first ? { role: 'assistant', content: piece } : { content: piece }, null);
}

/** The last chunk: the finish reason, usage, the ids of the stored message and run, and the citations. */
export function finalChunk(ids: RunIds, usage: Usage, citations: Citation[]) {
  return chunk(ids, {}, 'stop', {
    usage,
    messageId: ids.messageId,
    runId: ids.runId,
    citations,
    moderation_results: noModeration,
  });
}

function chunk(ids: RunIds, delta: Record<string, unknown>, finishReason: string | null, extra = {}) {
  return {
    id: `chatcmpl-${ids.runId}`,
    object: 'chat.completion.chunk',
    created: ids.created,
    model: ids.model,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
    ...extra,
  };
}

/** Frames one chunk (or the SSE `[DONE]` marker) for a streamed delivery. */
export function frameFor(delivery: Exclude<Delivery, 'json'>): (data: unknown) => string {
  return delivery === 'sse'
    ? data => `data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`
    : data => `${JSON.stringify(data)}\n`;
}

export const streamContentType = (delivery: Exclude<Delivery, 'json'>) =>
  delivery === 'sse' ? 'text/event-stream; charset=utf-8' : 'application/x-ndjson';
