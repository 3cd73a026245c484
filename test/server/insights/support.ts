import type { Conversation } from '../../../src/service/types.js';
import { ada } from '../../support/service.js';

/**
 * A conversation whose every text is markup, as a visitor (or a model) could write it: its question, reply, comment,
 * page and source would each fetch something or run a script if the report wrote them as HTML.
 */
export function hostileConversation(at: string): Conversation {
  const time = Date.parse(at);
  const later = (s: number) => new Date(time + s * 1000).toISOString();
  const replyId = crypto.randomUUID();
  return {
    conversationId: crypto.randomUUID(),
    personaId: ada.personaId,
    personaVersionId: ada.personaVersionId,
    conversationStatus: 'open',
    externalUserId: 'visitor-<b>hostile</b>',
    configuration: { personaName: ada.name },
    chatMessages: [
      {
        role: 'user',
        content: '<img src=https://tracker.example/pixel.gif onerror=alert(1)>',
        messageId: crypto.randomUUID(),
        timestamp: later(0),
        promptTokens: 12,
        completionTokens: 0,
        totalTokens: 12,
      },
      {
        role: 'assistant',
        content:
          '</blockquote><style>body{background:url(https://tracker.example/bg.png)}</style><script>alert(2)</script>',
        messageId: replyId,
        timestamp: later(3),
        promptTokens: 100,
        completionTokens: 30,
        totalTokens: 130,
        feedbacks: [],
      },
    ],
    chatMessagesCount: 2,
    metadata: {
      client: { page: '/"><iframe src="https://tracker.example/frame"></iframe>' },
      personaChat: {
        feedback: {
          [replyId]: {
            feedbackId: crypto.randomUUID(),
            score: -1,
            comments: '<a href="https://tracker.example/">click</a> & <svg onload=alert(3)>',
            tags: ['<i>tag</i>'],
            timestamp: later(30),
          },
        },
        citations: {
          [replyId]: {
            timestamp: later(3),
            citations: [
              {
                documentId: 'evil',
                sourceName: '<img src=https://tracker.example/s.gif>',
                sourceUrl: 'javascript:alert(4)',
              },
            ],
          },
        },
      },
    },
    isDeleted: false,
  };
}
