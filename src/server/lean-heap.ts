/**
 * @module
 * Imported first by the CLI, so that its V8 setting (heap.ts) is in place before the backend's modules load.
 */
import { leanHeap } from './heap.js';

leanHeap();
