/**
 * @module
 * The Conversation Service client: `new ServiceClient(options)`, its error type, its types, its stream reader, and
 * `createHttp2Fetch()`, the HTTP/2 transport it makes by itself when none is given.
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
export { ChunkNormalizer, readNdjsonBatches, readNdjsonStream, readSseBatches, readSseStream } from './stream.js';
// Safe to import anywhere: node:http2 itself is imported only by the first request of an HTTP/2 fetch.
export { createHttp2Fetch } from './http2.js';
export type { Http2Fetch } from './http2.js';
export type * from './types.js';
