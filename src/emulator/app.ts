/**
 * @module
 * The emulator: a local, stateful Conversation Service behind a web-standard `fetch` handler. It implements every
 * operation of the interface, both path forms of the continue operations and all three deliveries, and fills each
 * gap of the interface with one documented choice (see the README's emulator section).
 */
import { Hono } from 'hono';
import type { Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { requestId } from 'hono/request-id';
import type { RequestIdVariables } from 'hono/request-id';
import { timingSafeEqual } from 'hono/utils/buffer';
import { z } from 'zod';
import { BodyError, readJsonBody } from '../json-body.js';
import type { Conversation } from '../service/types.js';
import { answer } from './answer.js';
import type { Delivery } from './format.js';
import { KnowledgeBase } from './engine.js';
import { Faults, faultSettingsSchema } from './faults.js';
import type { FaultSettingsInput, FaultTarget } from './faults.js';
import { defaultPersonas } from './personas.js';
import type { Persona } from './personas.js';
import { ModelError, builtinReply, openAiReply, sleep } from './replies.js';
import type { OpenAiOptions, ReplyPlan } from './replies.js';
import { seedConversations } from './seed.js';
import type { SeedOptions } from './seed.js';
import { ConversationStore, InvalidContinuationToken } from './store.js';
import type { ListScope } from './store.js';

export interface EmulatorOptions {
  /** The API key every request must carry. Default `dev-key`. */
  apiKey?: string;
  /** The header that carries it. Default `x-svc-api-key`. */
  apiKeyHeader?: string;
  /** The personas and their documents. Default: the two demo personas. */
  personas?: Persona[];
  /** Words per second of the built-in engine's streamed replies; 0 (default) is as fast as possible. */
  pace?: number;
  /** Which continue paths to serve: both forms (default), only form B (`chat`) or only form A (`continue`). */
  routes?: 'both' | 'chat' | 'continue';
  /** Largest request body in bytes. Default 256 KiB. */
  maxBodyBytes?: number;
  /** Generate replies with an OpenAI-compatible endpoint instead of the built-in engine. */
  openai?: OpenAiOptions;
  /** Faults to start with. */
  faults?: Partial<FaultSettingsInput>;
  /** Starts with a month (or the given days) of made-up conversations with the personas (see `seed.ts`). */
  seed?: SeedOptions;
}

export interface Emulator {
  fetch(request: Request, env?: unknown): Promise<Response>;
  readonly personas: readonly Persona[];
  readonly store: ConversationStore;
  readonly faults: Faults;
}

type AppEnv = { Variables: RequestIdVariables };
type Ctx = Context<AppEnv>;

class EmulatorError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const uuid = z.uuid();
const requiredText = (max: number) => z.string().trim().min(1).max(max);

const createGeneralSchema = z.object({
  system: requiredText(200),
  model: requiredText(200),
  externalUserId: requiredText(256),
});
const createPersonaSchema = z.object({ personaId: uuid, externalUserId: requiredText(256) });
const continueSchema = z.object({ message: z.string().min(1, 'message must have at least one character') });
const metadataObject = z.record(z.string(), z.unknown());
const setActiveSchema = z.union(
  [
    z.object({ isActive: z.boolean() }).transform(b => b.isActive),
    z.object({ active: z.boolean() }).transform(b => b.active),
  ],
  { error: 'isActive must be a boolean' },
);
const setMetadataSchema = z.union(
  [
    z.object({ metadata: metadataObject }).transform(b => b.metadata),
    metadataObject.refine(b => !('metadata' in b), 'metadata must be an object'),
  ],
  { error: 'metadata must be an object' },
);
const setNameSchema = z.union(
  [
    z.object({ conversationName: z.string().max(200) }).transform(b => b.conversationName),
    z.object({ name: z.string().max(200) }).transform(b => b.name),
  ],
  { error: 'conversationName must be a string of at most 200 characters' },
);
const setStatusSchema = z.union(
  [
    z.object({ conversationStatus: requiredText(64) }).transform(b => b.conversationStatus),
    z.object({ status: requiredText(64) }).transform(b => b.status),
  ],
  { error: 'conversationStatus must be a string of 1 to 64 characters' },
);

const seedSchema = z.strictObject({
  conversations: z.int().min(0).max(100_000).optional(),
  days: z.int().min(1).max(3660).optional(),
  end: z.iso
    .date()
    .or(z.iso.datetime({ offset: true }))
    .optional(),
  seed: z.int().optional(),
});

const continueRoutes: { form: 'chat' | 'continue'; method: 'post' | 'patch'; suffix: string; delivery: Delivery }[] = [
  { form: 'chat', method: 'patch', suffix: 'chat', delivery: 'json' },
  { form: 'chat', method: 'patch', suffix: 'chat-sse', delivery: 'sse' },
  { form: 'chat', method: 'patch', suffix: 'chat-http2', delivery: 'http2' },
  { form: 'continue', method: 'post', suffix: 'continue', delivery: 'json' },
  { form: 'continue', method: 'post', suffix: 'continue-sse', delivery: 'sse' },
  { form: 'continue', method: 'post', suffix: 'continue-stream', delivery: 'http2' },
];

function targetOf(method: string, path: string): Exclude<FaultTarget, 'any'> {
  if (/\/(continue|continue-sse|continue-stream|chat|chat-sse|chat-http2)$/.test(path)) return 'continue';
  if (method === 'POST') return 'create';
  if (method === 'GET') return 'read';
  return 'manage';
}

/** Makes an emulator. Its `fetch` serves the interface at the root of whatever origin it is mounted on. */
export function createEmulator(options: EmulatorOptions = {}): Emulator {
  const apiKey = options.apiKey ?? 'dev-key';
  const apiKeyHeader = (options.apiKeyHeader ?? 'x-svc-api-key').toLowerCase();
  const personas = options.personas ?? defaultPersonas;
  const pace = options.pace ?? 0;
  const routes = options.routes ?? 'both';
  const maxBodyBytes = options.maxBodyBytes ?? 256 * 1024;
  if (!apiKey) throw new Error('createEmulator: "apiKey" must not be empty');
  if (!Number.isFinite(pace) || pace < 0)
    throw new Error('createEmulator: "pace" must be a number of words per second, 0 or more');
  if (!['both', 'chat', 'continue'].includes(routes))
    throw new Error('createEmulator: "routes" must be both, chat or continue');
  if (options.openai && (!options.openai.baseUrl || !options.openai.model)) {
    throw new Error('createEmulator: "openai" needs a baseUrl and a model');
  }

  const store = new ConversationStore();
  if (options.seed) for (const conversation of seedConversations(personas, options.seed)) store.add(conversation);
  const faults = new Faults(options.faults);
  const knowledge = new Map(personas.map(p => [p.personaId, new KnowledgeBase(p)]));
  const everything = new KnowledgeBase({
    personaId: '00000000-0000-4000-8000-000000000000',
    personaVersionId: '00000000-0000-4000-8000-000000000000',
    name: 'the general assistant',
    description: "Answers from every persona's documents.",
    aiSystem: 'persona-chat-emulator',
    model: 'extractive-1',
    index: 'all',
    greeting: 'Hello! What would you like to know?',
    style: { lead: [], unknown: "I don't know that: none of the documents I answer from cover it." },
    documents: personas.flatMap(p => p.documents),
  });

  const app = new Hono<AppEnv>();

  app.use('*', requestId());

  // The emulator's own control routes: no API key, no faults.
  app.get('/__emulator/faults', c => c.json(faults.settings));
  app.post('/__emulator/faults', async c => c.json(faults.set(await readBody(c, faultSettingsSchema.partial()))));
  app.delete('/__emulator/faults', c => c.json(faults.reset()));
  app.post('/__emulator/reset', c => {
    store.clear();
    return c.json({ faults: faults.reset(), conversations: 0 });
  });
  app.post('/__emulator/seed', async c => {
    const body = await readBody(c, seedSchema);
    let seeded;
    try {
      seeded = seedConversations(personas, body);
    } catch (error) {
      throw new EmulatorError(400, 'invalid_request', (error as Error).message);
    }
    for (const conversation of seeded) store.add(conversation);
    return c.json({ seeded: seeded.length, conversations: store.size });
  });
  app.get('/__emulator/personas', c =>
    c.json({
      data: personas.map(({ personaId, personaVersionId, name, description, greeting, aiSystem, model }) => ({
        personaId,
        personaVersionId,
        name,
        description,
        greeting,
        aiSystem,
        model,
      })),
    }),
  );

  app.use('*', async function apiKeyAuth(c, next) {
    if (c.req.path.startsWith('/__emulator/')) return next();
    const given = c.req.header(apiKeyHeader);
    if (!given) throw new EmulatorError(401, 'unauthorized', `The ${apiKeyHeader} header is missing.`);
    if (!(await timingSafeEqual(given, apiKey)))
      throw new EmulatorError(401, 'unauthorized', 'The API key is not valid.');
    const { latencyMs } = faults.settings;
    if (latencyMs) await sleep(latencyMs);
    const target = targetOf(c.req.method, c.req.path);
    const status = faults.takeStatus(target);
    if (status) {
      if (status === 429) c.header('retry-after', '1');
      throw new EmulatorError(status, 'injected_fault', `Fault injected by the emulator: ${status}.`);
    }
    if (faults.takeHtml(target)) return c.html(proxyPage);
    return next();
  });

  app.use(
    '*',
    bodyLimit({
      maxSize: maxBodyBytes,
      onError(c) {
        // The body is refused unread, and a client may stop sending it once it has the answer: the connection cannot
        // carry another request, so it closes after this one rather than being reused and cut under the next.
        c.header('connection', 'close');
        throw new EmulatorError(413, 'payload_too_large', `The request body is larger than ${maxBodyBytes} bytes.`);
      },
    }),
  );

  // Creating

  app.post('/conversations', async c => {
    const body = await readBody(c, createGeneralSchema);
    const conversation = newConversation({
      aiSystem: body.system,
      model: body.model,
      externalUserId: body.externalUserId,
      personaId: null,
      personaVersionId: null,
      configuration: { system: body.system, model: body.model },
    });
    return c.json(store.add(conversation));
  });

  app.post('/conversations/persona', async c => {
    const body = await readBody(c, createPersonaSchema);
    const persona = personas.find(p => p.personaId === body.personaId);
    if (!persona) throw new EmulatorError(404, 'persona_not_found', 'No persona has that personaId.');
    const conversation = newConversation({
      aiSystem: persona.aiSystem,
      model: persona.model,
      externalUserId: body.externalUserId,
      personaId: persona.personaId,
      personaVersionId: persona.personaVersionId,
      configuration: { personaName: persona.name, greeting: persona.greeting },
    });
    return c.json(store.add(conversation));
  });

  // Retrieving

  const listRoute = (c: Ctx, scope: ListScope) => {
    try {
      return c.json(store.list(scope, c.req.query('continuationToken')));
    } catch (error) {
      if (error instanceof InvalidContinuationToken) throw new EmulatorError(400, 'invalid_request', error.message);
      throw error;
    }
  };
  app.get('/conversations', c => listRoute(c, { kind: 'all' }));
  app.get('/conversations/user/:externalUserId', c =>
    listRoute(c, { kind: 'user', externalUserId: c.req.param('externalUserId') }),
  );
  app.get('/conversations/persona/:personaId', c => {
    const personaId = c.req.param('personaId');
    if (!uuid.safeParse(personaId).success)
      throw new EmulatorError(400, 'invalid_request', 'personaId must be a UUID.');
    return listRoute(c, { kind: 'persona', personaId });
  });
  app.get('/conversations/:conversationId', c => c.json(conversationOf(c)));

  // Continuing

  for (const route of continueRoutes) {
    if (routes !== 'both' && routes !== route.form) continue;
    app.on(route.method.toUpperCase(), `/conversations/:conversationId/${route.suffix}`, async c => {
      if (route.delivery === 'http2') requireHttp2(c);
      const conversation = conversationOf(c);
      const { message } = await readBody(c, continueSchema);
      return answer({
        conversation,
        message,
        delivery: route.delivery,
        requestId: c.get('requestId'),
        signal: c.req.raw.signal,
        plan: signal => plan(conversation, message, signal),
        store,
        faults,
      });
    });
  }

  // Managing

  const manage = <T>(suffix: string, schema: z.ZodType<T>, apply: (conversation: Conversation, value: T) => void) =>
    app.patch(`/conversations/:conversationId/${suffix}`, async c => {
      const conversation = conversationOf(c);
      apply(conversation, await readBody(c, schema));
      return c.json(conversation);
    });
  manage('set-active', setActiveSchema, (conversation, isActive) => (conversation.isActive = isActive));
  manage('set-metadata', setMetadataSchema, (conversation, metadata) => (conversation.metadata = metadata));
  manage('set-conversation-name', setNameSchema, (conversation, name) => (conversation.conversationName = name));
  manage(
    'set-conversation-status',
    setStatusSchema,
    (conversation, status) => (conversation.conversationStatus = status),
  );

  app.notFound(c => errorResponse(c, new EmulatorError(404, 'not_found', 'No such route.')));
  app.onError((error, c) => {
    if (error instanceof EmulatorError) return errorResponse(c, error);
    if (error instanceof BodyError) return errorResponse(c, new EmulatorError(400, 'invalid_request', error.message));
    if (error instanceof ModelError) return errorResponse(c, new EmulatorError(502, 'model_error', error.message));
    console.error(`[emulator] ${c.get('requestId')}`, error);
    return errorResponse(c, new EmulatorError(500, 'internal_error', 'The emulator failed to answer.'));
  });

  function errorResponse(c: Ctx, error: EmulatorError) {
    const requestId = c.get('requestId');
    return c.json(
      { error: { code: error.code, message: error.message, status: error.status, requestId } },
      error.status as 400,
    );
  }

  function newConversation(fields: Partial<Conversation>): Conversation {
    return {
      conversationId: crypto.randomUUID(),
      aiSystem: '',
      model: '',
      conversationStatus: 'open',
      conversationName: null,
      chatMessages: [],
      chatMessagesCount: 0,
      chatStarted: false,
      areChatMessagesInBlob: false,
      chatMessagesBlobUri: null,
      configuration: {},
      metadata: {},
      externalUserId: '',
      isActive: true,
      isDeleted: false,
      promptTokens: 0,
      completionTokens: 0,
      totalTokens: 0,
      ...fields,
    };
  }

  function conversationOf(c: Ctx): Conversation {
    const id = c.req.param('conversationId') ?? '';
    if (!uuid.safeParse(id).success) throw new EmulatorError(400, 'invalid_request', 'conversationId must be a UUID.');
    const conversation = store.get(id);
    if (!conversation || conversation.isDeleted) {
      throw new EmulatorError(404, 'conversation_not_found', 'No conversation has that conversationId.');
    }
    return conversation;
  }

  function requireHttp2(c: Ctx) {
    const incoming = (c.env as { incoming?: { httpVersionMajor?: number } } | undefined)?.incoming;
    if (incoming && incoming.httpVersionMajor !== 2) {
      throw new EmulatorError(
        505,
        'http2_required',
        'This operation streams over HTTP/2 only; use the HTTP/2 listener.',
      );
    }
  }

  async function plan(conversation: Conversation, message: string, signal: AbortSignal): Promise<ReplyPlan> {
    const kb = (conversation.personaId && knowledge.get(conversation.personaId)) || everything;
    const request = { kb, history: conversation.chatMessages ?? [], message, pace, signal };
    return options.openai ? openAiReply(options.openai, request) : builtinReply(request);
  }

  return {
    fetch: (request, env) => Promise.resolve(app.fetch(request, env)),
    personas,
    store,
    faults,
  };
}

/** What an html fault answers with: the kind of page a proxy in front of a service shows when it fails. */
const proxyPage =
  '<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head>' +
  '<body><h1>Bad Gateway</h1><p>The proxy server received an invalid response from an upstream server.</p></body></html>';

/** Bodies are JSON objects; the emulator reads them whatever Content-Type they came with. */
const readBody = <T>(c: Ctx, schema: z.ZodType<T>) => readJsonBody(c, schema, { requireJsonType: false });
