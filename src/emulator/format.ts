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

/**
 * The last chunk: the finish reason and the reply's moderation results in its choice, as a complete response's
 * choice has them; usage, the ids of the stored message and run, the citations and the prompt's moderation results
 * beside, as a complete response has them.
 */
export function finalChunk(ids: RunIds, usage: Usage, citations: Citation[]) {
  return chunk(
    ids,
    {},
    'stop',
    { usage, messageId: ids.messageId, runId: ids.runId, citations, prompt_moderations: noModeration },
    { moderation_results: noModeration },
  );
}

function chunk(ids: RunIds, delta: Record<string, unknown>, finishReason: string | null, extra = {}, choice = {}) {
  return {
    id: `chatcmpl-${ids.runId}`,
    object: 'chat.completion.chunk',
    created: ids.created,
    model: ids.model,
    choices: [{ index: 0, delta, finish_reason: finishReason, ...choice }],
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
