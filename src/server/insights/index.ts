/**
 * @module
 * The site owner's insights: `insights(options)` reads the conversations of the configured personas (or the whole
 * organization) from the Conversation Service and computes what visitors asked and where the assistant failed;
 * `formatInsights(report, format)` writes it as a self-contained HTML page, JSON or CSV. The command
 * `persona-chat-server insights` does both (see `./cli.ts`).
 */
import { ServiceClient } from '../../service/client.js';
import type { ServiceClientOptions } from '../../service/client.js';
import { collectConversations } from './collect.js';
import type { CollectOptions } from './collect.js';
import { computeInsights } from './compute.js';
import type { ComputeOptions, Insights } from './compute.js';
import { renderCsv } from './csv.js';
import { renderHtml } from './html.js';

export { InsightsError } from './collect.js';
export type { Progress } from './collect.js';
export type * from './compute.js';

export type InsightsFormat = 'html' | 'json' | 'csv';

export interface InsightsOptions
  extends
    Omit<ComputeOptions, 'scope'>,
    Pick<CollectOptions, 'concurrency' | 'onProgress' | 'signal' | 'timeouts' | 'retries' | 'retryDelayMs'> {
  /** The service: a client, or the options to make one (closed again when the report is made). */
  service: ServiceClient | ServiceClientOptions;
  /** The personas whose conversations to read; none (default) reads the organization's. */
  personaIds?: readonly string[];
}

/** Reads the conversations and computes the report. Rejects with a ServiceError or an InsightsError. */
export async function insights(options: InsightsOptions): Promise<Insights> {
  const { service, personaIds, concurrency, onProgress, signal, timeouts, retries, retryDelayMs, ...compute } = options;
  const client = service instanceof ServiceClient ? service : new ServiceClient(service);
  try {
    const conversations = await collectConversations(client, {
      personaIds,
      concurrency,
      onProgress,
      signal,
      timeouts,
      retries,
      retryDelayMs,
    });
    return computeInsights(conversations, {
      ...compute,
      scope: personaIds?.length ? { kind: 'personas', personaIds: [...new Set(personaIds)] } : { kind: 'organization' },
    });
  } finally {
    if (client !== service) client.close();
  }
}

/** The report as text in one of its formats. */
export function formatInsights(report: Insights, format: InsightsFormat = 'html'): string {
  switch (format) {
    case 'html':
      return renderHtml(report);
    case 'json':
      return `${JSON.stringify(report, null, 2)}\n`;
    case 'csv':
      return renderCsv(report);
    default:
      throw new RangeError(`The format must be html, json or csv, not ${String(format)}.`);
  }
}
