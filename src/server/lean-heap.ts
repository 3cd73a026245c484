/**
 * @module
 * Imported first by the CLI, so that its V8 setting (heap.ts) is in place before the backend's modules load.
 */
import { leanHeap } from './heap.js';

/** The CLI's V8 setting; the CLI has it watch its server. */
export const heap = leanHeap();
