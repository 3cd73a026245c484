/**
 * @module
 * A month of made-up conversations for the emulator, so that what reads the service's history (the site owner's
 * insights report, a list view) can be tried and tested without a month of visitors. Every conversation is written
 * as the backend would have left it: the built-in engine's replies with their token counts, the browser's `page`
 * under the metadata's `client` key, and the backend's own `personaChat` maps (feedback, citations, and the outcome
 * of replies that were stopped or failed, which leave nothing in the history). Now and then a question is kept with
 * no reply after it (the service failed after keeping it), and a thumb is in the message's own `feedbacks`, as
 * another tool of the site's would leave it. The same options always give the same conversations: the randomness
 * is a seeded PRNG and the times count back from a fixed end.
 */
import type { ChatMessage, Citation, Conversation } from '../service/types.js';
import { KnowledgeBase, composeReply, countTokens } from './engine.js';
import type { Persona } from './personas.js';

export interface SeedOptions {
  /** How many conversations. Default 600. */
  conversations?: number;
  /** Over how many days before `end`. Default 30. */
  days?: number;
  /** When the period ends (exclusive): an ISO date or time. Default the start of today (UTC). */
  end?: string | Date;
  /** The PRNG's seed. Default 1. */
  seed?: number;
}

/** Mulberry32: a small, fast PRNG whose whole state is one 32-bit number. */
export function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Script {
  /** What visitors ask, most asked first; a few are spelled several ways, as people do. */
  questions: string[];
  /** What the engine has no document for. */
  offTopic: string[];
  /** Where the chat was opened. */
  pages: string[];
}

const scripts: Record<string, Script> = {
  // Ada, the product guide.
  'd8357ade-fff8-4bd3-9194-fa5b172b45f8': {
    questions: [
      'How do I install the widget?',
      'how do I install the widget',
      'How do I change the accent color?',
      'Does it work with a strict Content-Security-Policy?',
      'Where is the API key kept?',
      'How do tokens expire?',
      'How do I run the backend?',
      'Can I stop a reply while it streams?',
      'Which events does the element fire?',
      'Is the widget accessible with a keyboard?',
      'How do I start the emulator?',
      'Which languages are supported?',
      'How are conversations kept between visits?',
      'Can replies show tables and links?',
      'How do I use inline mode?',
    ],
    offTopic: ['Does it integrate with Salesforce?', 'What is the price of the enterprise plan?', 'Can it send SMS?'],
    pages: ['/docs/install', '/docs/theming', '/docs/backend', '/docs/security', '/docs', '/pricing'],
  },
  // Juniper, the outdoor shop's assistant.
  '3e913ded-bf6d-4591-85bb-a2d9be56efd6': {
    questions: [
      'How do I return a tent?',
      'how do i return a tent',
      'How long does shipping take?',
      'Is shipping free?',
      'What does the warranty cover?',
      'Can I rent a tent for the weekend?',
      'What size tent do I need for three people?',
      'Which sleeping bag rating should I pick?',
      'How should hiking boots fit?',
      'Is the membership worth it?',
      'Can you fix a broken tent pole?',
      'What are your store hours?',
      'How do I wash a waterproof jacket?',
      'Do you price match?',
      'Do I need a bear canister?',
    ],
    offTopic: ['Do you sell kayaks?', 'Can I pay with crypto?', 'Is the Seattle store hiring?'],
    pages: ['/', '/tents', '/help/returns', '/help/shipping', '/rentals', '/boots', '/checkout'],
  },
};

/** A persona without a script of its own is asked about its documents, by their titles. */
function scriptOf(persona: Persona): Script {
  return (
    scripts[persona.personaId] ?? {
      questions: persona.documents.map(d => `Tell me about ${d.title.toLowerCase()}`),
      offTopic: ['What is the weather tomorrow?', 'Can I speak to a human?'],
      pages: ['/', '/help'],
    }
  );
}

const comments = [
  'That is not what I asked.',
  'Too long, I just wanted a yes or no.',
  'The link did not help.',
  'Wrong answer, the page says otherwise.',
  'It did not understand my question.',
];

const tagsDown = ['incorrect', 'not-helpful', 'too-long'];

/** `days` of conversations before `end`, as the emulator's store would hold them, oldest first. */
export function seedConversations(personas: readonly Persona[], options: SeedOptions = {}): Conversation[] {
  const count = options.conversations ?? 600;
  const days = options.days ?? 30;
  const random = prng(options.seed ?? 1);
  // The questions left unanswered and the service's own thumbs come from a PRNG of their own, so that a seed's month
  // keeps its conversations, questions, visitors and times.
  const rare = prng((options.seed ?? 1) ^ 0x5eed);
  const endMs = options.end === undefined ? startOfToday() : new Date(options.end).getTime();
  if (!Number.isInteger(count) || count < 0) throw new Error('seed: "conversations" must be a whole number');
  if (!Number.isInteger(days) || days < 1) throw new Error('seed: "days" must be a whole number, 1 or more');
  if (Number.isNaN(endMs)) throw new Error('seed: "end" must be a date');
  if (personas.length === 0) return [];

  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  /** An item of a list where earlier items come up more often (a Zipf-like skew). */
  const skewed = <T>(items: readonly T[]): T => items[Math.floor(items.length * random() ** 1.7)]!;
  const uuidOf = (source: () => number) => {
    const hex = Array.from({ length: 32 }, () => Math.floor(source() * 16).toString(16));
    hex[12] = '4';
    hex[16] = '89ab'[Math.floor(source() * 4)]!;
    const h = hex.join('');
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  };
  const uuid = () => uuidOf(random);

  const knowledge = new Map(personas.map(p => [p.personaId, new KnowledgeBase(p)]));
  const replies = new Map<string, { text: string; citations: Citation[] }>();
  const replyTo = (persona: Persona, question: string) => {
    const key = `${persona.personaId}\n${question}`;
    let reply = replies.get(key);
    if (!reply) replies.set(key, (reply = composeReply(knowledge.get(persona.personaId)!, question)));
    return reply;
  };
  // Visitors come back: a pool a third the size of the conversations, some of them much more often than others.
  const visitors = Array.from({ length: Math.max(1, Math.round(count / 3)) }, () => `anon_${uuid().slice(0, 13)}`);

  const conversations: { start: number; conversation: Conversation }[] = [];
  for (let n = 0; n < count; n++) {
    // The first persona is asked about twice as often as each other one; weekdays are busier than weekends.
    const persona = random() < 2 / (personas.length + 1) ? personas[0]! : pick(personas.slice(1));
    const script = scriptOf(persona);
    let day = Math.floor(random() * days);
    const weekday = new Date(endMs - (day + 1) * 86_400_000).getUTCDay();
    if ((weekday === 0 || weekday === 6) && random() < 0.4) day = Math.floor(random() * days);
    const start = endMs - (day + 1) * 86_400_000 + Math.floor((0.25 + random() * 0.7) * 86_400_000);
    const externalUserId = skewed(visitors);
    const chatMessages: ChatMessage[] = [];
    const feedback: Record<string, unknown> = {};
    const citations: Record<string, unknown> = {};
    const outcomes: Record<string, unknown> = {};
    let time = start;
    /** When the first message was sent: the order of the list. */
    let opened: number | undefined;
    let promptTokens = 0;
    let completionTokens = 0;
    let totalTokens = 0;
    const turns = 1 + Math.floor(random() ** 2 * 4);
    for (let turn = 0; turn < turns; turn++) {
      time += 20_000 + Math.floor(random() * 180_000);
      opened ??= time;
      const question = random() < 0.1 ? pick(script.offTopic) : skewed(script.questions);
      const fate = random();
      if (fate < 0.05) {
        // Stopped or failed: the service kept nothing, the backend kept the outcome.
        outcomes[uuid()] = {
          status: fate < 0.03 ? 'stopped' : 'failed',
          ...(fate < 0.03 ? {} : { code: 'upstream_error' }),
          timestamp: iso(time + 4000),
        };
        continue;
      }
      const reply = replyTo(persona, question);
      const runId = uuid();
      const userTokens = countTokens(question);
      const history = chatMessages.reduce((sum, m) => sum + countTokens(m.content), 0);
      const context =
        countTokens(persona.description) +
        reply.citations.reduce((sum, c) => sum + countTokens(JSON.stringify(c)), 0) +
        history;
      const completion = countTokens(reply.text);
      const base = { toolCallId: null, name: null, feedbacks: [], conversationRunId: runId };
      const replyId = uuid();
      const answer: ChatMessage = {
        ...base,
        role: 'assistant',
        content: reply.text,
        messageId: replyId,
        timestamp: iso(time + 3000),
        promptTokens: context,
        completionTokens: completion,
        totalTokens: context + completion,
      };
      chatMessages.push(
        {
          ...base,
          role: 'user',
          content: question,
          messageId: uuid(),
          timestamp: iso(time),
          promptTokens: userTokens,
          completionTokens: 0,
          totalTokens: userTokens,
        },
        answer,
      );
      promptTokens += userTokens + context;
      completionTokens += completion;
      totalTokens += userTokens + context + completion;
      if (reply.citations.length)
        citations[replyId] = { timestamp: iso(time + 3000), citations: compact(reply.citations) };
      // Replies with no source are voted down more often than the others.
      const vote = random();
      const downRate = reply.citations.length ? 0.05 : 0.35;
      if (vote < 0.15 + downRate) {
        const down = vote < downRate;
        const comment = down && random() < 0.6 ? pick(comments) : undefined;
        feedback[replyId] = {
          feedbackId: uuid(),
          score: down ? -1 : 1,
          ...(comment ? { comments: comment } : {}),
          tags: down && random() < 0.5 ? [pick(tagsDown)] : [],
          timestamp: iso(time + 30_000),
        };
      } else if (rare() < 0.04) {
        // A thumb another tool of the site's left in the message's own feedbacks.
        const score = rare() < 0.5 ? -1 : 1;
        answer.feedbacks = [{ feedbackId: uuidOf(rare), score, tags: [], timestamp: iso(time + 60_000) }];
      }
      if (rare() < 0.02) {
        // The service kept the question, then failed: no reply follows it in the history.
        chatMessages.pop();
        delete citations[replyId];
        delete feedback[replyId];
        promptTokens -= context;
        completionTokens -= completion;
        totalTokens -= context + completion;
      }
    }
    const personaChat = {
      ...(Object.keys(feedback).length ? { feedback } : {}),
      ...(Object.keys(citations).length ? { citations } : {}),
      ...(Object.keys(outcomes).length ? { outcomes } : {}),
    };
    const page = random() < 0.9 ? pick(script.pages) : undefined;
    const first = chatMessages[0]?.content;
    conversations.push({
      start: opened ?? start,
      conversation: {
        conversationId: uuid(),
        aiSystem: persona.aiSystem,
        model: persona.model,
        personaId: persona.personaId,
        personaVersionId: persona.personaVersionId,
        // Now and then a visitor deletes a conversation, which the backend marks with the status `deleted`.
        conversationStatus: random() < 0.02 ? 'deleted' : 'open',
        conversationName: first ? first.slice(0, 60) : null,
        chatMessages,
        chatMessagesCount: chatMessages.length,
        chatStarted: chatMessages.length > 0,
        areChatMessagesInBlob: false,
        chatMessagesBlobUri: null,
        configuration: { personaName: persona.name, greeting: persona.greeting },
        metadata: {
          ...(page ? { client: { page } } : {}),
          ...(Object.keys(personaChat).length ? { personaChat } : {}),
        },
        externalUserId,
        isActive: true,
        isDeleted: false,
        promptTokens,
        completionTokens,
        totalTokens,
      },
    });
  }
  return conversations.sort((a, b) => a.start - b.start).map(c => c.conversation);
}

/** A reply's citations as the backend keeps them: the document, its name and link, and the start of its passages. */
function compact(citations: Citation[]): Citation[] {
  return citations.map(({ documentId, sourceName, sourceUrl, partitions }) => ({
    ...(documentId === undefined ? {} : { documentId }),
    ...(sourceName === undefined ? {} : { sourceName }),
    ...(sourceUrl === undefined ? {} : { sourceUrl }),
    partitions: (partitions ?? []).slice(0, 5).map(({ text, relevance }) => ({
      text: text.length > 300 ? `${text.slice(0, 300).trimEnd()}…` : text,
      ...(relevance === undefined ? {} : { relevance }),
    })),
  }));
}

const iso = (ms: number) => new Date(ms).toISOString();

function startOfToday(): number {
  const now = new Date();
  return Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
}
