/**
 * @module
 * Types for every resource of the Conversation Service interface, and the normalized chunks the streaming
 * methods of the client yield. Fields the interface lists but does not promise are optional.
 */

export interface Feedback {
  feedbackId?: string;
  score?: number;
  comments?: string;
  tags?: string[];
  timestamp?: string;
  scoreConfidence?: number;
}

export interface ChatMessage {
  role: string;
  content: string;
  toolCallId?: string | null;
  name?: string | null;
  messageId?: string;
  timestamp?: string;
  feedbacks?: Feedback[];
  promptTokens?: number;
  completionTokens?: number;
  totalTokens?: number;
  conversationRunId?: string;
}

export interface Conversation {
  conversationId: string;
  aiSystem?: string;
  model?: string;
  personaId?: string | null;
  personaVersionId?: string | null;
  conversationStatus?: string;
  conversationName?: string | null;
  chatMessages?: ChatMessage[];
  chatMessagesCount?: number;
  chatStarted?: boolean;
  areChatMessagesInBlob?: boolean;
  chatMessagesBlobUri?: string | null;
  configuration?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
  externalUserId?: string;
  isActive?: boolean;
  isDeleted?: boolean;
  promptTokens?: number;
  completionTokens?: number;
  totalTokens?: number;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export interface ModerationCategoryResult {
  category: string;
  filtered: boolean;
  severity: string;
}

export interface ModerationResult {
  categoryResults: ModerationCategoryResult[];
}

export interface Partition {
  text: string;
  relevance?: number;
  partitionNumber?: number;
  sectionNumber?: number;
  lastUpdate?: string;
  tags?: Record<string, unknown>;
}

/** A source a reply drew on. `index` is the name of the search index, not a footnote number. */
export interface Citation {
  link?: string;
  index?: string;
  documentId?: string;
  fileId?: string;
  sourceContentType?: string;
  sourceName?: string;
  sourceUrl?: string;
  partitions?: Partition[];
}

export interface Choice {
  finish_reason?: string | null;
  index?: number;
  message?: { role?: string; content?: string | null; toolCallId?: string | null; name?: string | null };
  moderation_results?: ModerationResult;
}

/** The body of a complete-response continue. */
export interface ChatResponse {
  id?: string;
  object?: string;
  usage?: Usage;
  created?: number;
  choices: Choice[];
  messageId?: string;
  runId?: string;
  httpRequestId?: string;
  citations?: Citation[];
  prompt_moderations?: ModerationResult;
}

export interface ListResponse {
  data: Conversation[];
  continuationToken?: string | null;
}

/** One piece of a streamed reply, whatever wire format the service used. */
export type StreamChunk =
  | { type: 'delta'; text: string }
  | { type: 'citations'; citations: Citation[] }
  | {
      type: 'done';
      messageId?: string;
      runId?: string;
      finishReason?: string;
      usage?: Usage;
      moderation?: ModerationResult;
    };

export type DoneChunk = Extract<StreamChunk, { type: 'done' }>;
