/**
 * @module
 * Faults the emulator can inject, so every failure a client must survive can be produced on demand.
 */
import { z } from 'zod';

export type FaultTarget = 'any' | 'continue' | 'create' | 'read' | 'manage';

/** How many matching requests a fault applies to (null: until cleared), and which ones. */
const countOn = {
  count: z.number().int().min(1).nullable().default(1),
  on: z.enum(['any', 'continue', 'create', 'read', 'manage']).default('any'),
};

export const faultSettingsSchema = z
  .object({
    /** Wait before answering any request (before the status line, so before the first byte). */
    latencyMs: z.number().int().min(0).max(120_000),
    /** Wait before every streamed chunk, on top of the pace. */
    chunkDelayMs: z.number().int().min(0).max(120_000),
    /** Answer the next `count` matching requests with this status (count null: until cleared). */
    status: z.object({ code: z.number().int().min(400).max(599), ...countOn }).nullable(),
    /** Answer the next `count` matching requests with 200 and an HTML page, as a proxy in front of a service may. */
    html: z.object(countOn).nullable(),
    /** Break the next `count` streams after `afterChunks` chunks, without a terminal chunk (count null: every stream). */
    cut: z
      .object({
        afterChunks: z.number().int().min(0),
        count: z.number().int().min(1).nullable().default(1),
      })
      .nullable(),
  })
  .strict();

export type FaultSettings = z.infer<typeof faultSettingsSchema>;
export type FaultSettingsInput = z.input<typeof faultSettingsSchema>;

export const noFaults: FaultSettings = { latencyMs: 0, chunkDelayMs: 0, status: null, html: null, cut: null };

export class Faults {
  #settings: FaultSettings;

  constructor(initial: Partial<FaultSettingsInput> = {}) {
    this.#settings = { ...noFaults };
    this.set(initial);
  }

  get settings(): FaultSettings {
    return structuredClone(this.#settings);
  }

  /** Merges `input` into the current settings; throws a ZodError when it does not validate. */
  set(input: Partial<FaultSettingsInput>): FaultSettings {
    this.#settings = faultSettingsSchema.parse({ ...this.#settings, ...input });
    return this.settings;
  }

  reset(): FaultSettings {
    this.#settings = { ...noFaults };
    return this.settings;
  }

  /** The status to fail this request with, if a status fault applies to it; counts it down. */
  takeStatus(target: Exclude<FaultTarget, 'any'>): number | undefined {
    return this.#take('status', target)?.code;
  }

  /** Whether to answer this request with an HTML page, if an html fault applies to it; counts it down. */
  takeHtml(target: Exclude<FaultTarget, 'any'>): boolean {
    return this.#take('html', target) !== undefined;
  }

  #take<K extends 'status' | 'html'>(kind: K, target: Exclude<FaultTarget, 'any'>) {
    const fault = this.#settings[kind];
    if (!fault || (fault.on !== 'any' && fault.on !== target)) return undefined;
    if (fault.count !== null && --fault.count <= 0) this.#settings[kind] = null;
    return fault as NonNullable<FaultSettings[K]>;
  }

  /** How many chunks this stream may send before it is cut, if a cut applies; counts it down. */
  takeCut(): number | undefined {
    const fault = this.#settings.cut;
    if (!fault) return undefined;
    if (fault.count !== null && --fault.count <= 0) this.#settings.cut = null;
    return fault.afterChunks;
  }
}
