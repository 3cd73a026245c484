/**
 * @module
 * The Conversation Service client: `new ServiceClient(options)`, its error type, its types and its stream reader.
 */
export { ServiceClient, chunksOfResponse, defaultTimeouts } from './client.js';
export type {
  CallOptions,
  Delivery,
  ListOptions,
  ListScope,
  RouteForm,
  ServiceClientOptions,
  Timeouts,
} from './client.js';
export { ServiceError, codeForStatus, isRetryableStatus } from './errors.js';
export type { ServiceErrorCode, ServiceErrorInit } from './errors.js';
export { ChunkNormalizer, readNdjsonStream, readSseStream } from './stream.js';
export type * from './types.js';
