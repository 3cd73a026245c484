/**
 * @module
 * How one message looks: a user bubble, or a reply with its markdown, footnotes, sources, notices and actions.
 * Pure functions of the item and a few callbacks; the element owns the state.
 */
import { html, nothing } from 'lit';
import type { Citation } from '../protocol.js';
import { MarkdownView } from './markdown.js';
import type { ChatItem } from './state.js';
import type { Strings } from './strings.js';

export interface MessageActions {
  retry(): void;
  feedback(item: ChatItem, value: 'up' | 'down'): void;
}

const views = new WeakMap<object, Map<string, MarkdownView>>();

/** One markdown view per reply and element, so streaming re-lexes only the tail. */
function viewFor(owner: object, key: string, strings: Strings): MarkdownView {
  let map = views.get(owner);
  if (!map) views.set(owner, (map = new Map()));
  let view = map.get(key);
  if (!view) map.set(key, (view = new MarkdownView({ copyLabel: strings.copy, sourceLabel: strings.source })));
  return view;
}

const thumb = (down: boolean) =>
  html`<svg viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2" aria-hidden="true">
    <path
      d=${down ? 'M10 15v4a3 3 0 0 0 3 3l4-9V2H5.7a2 2 0 0 0-2 1.7l-1.4 9A2 2 0 0 0 4.3 15H10z' : 'M14 9V5a3 3 0 0 0-3-3l-4 9v11h11.3a2 2 0 0 0 2-1.7l1.4-9A2 2 0 0 0 19.7 9H14z'}
    />
  </svg>`;

function sources(citations: Citation[], order: number[], strings: Strings, percent: Intl.NumberFormat) {
  const cited = order.filter(index => citations[index]);
  const rest = citations.map((_, i) => i).filter(i => !cited.includes(i));
  const list = [...cited, ...rest];
  if (!list.length) return nothing;
  return html`<div class="citations" part="citations">
    <h4>${strings.sources}</h4>
    <ol>
      ${list.map((index, n) => {
        const citation = citations[index]!;
        const name = citation.sourceName || citation.documentId || citation.sourceUrl || strings.source(n + 1);
        const url = citation.sourceUrl && /^https?:\/\//i.test(citation.sourceUrl) ? citation.sourceUrl : undefined;
        return html`<li id=${`source-${index}`} data-source=${index} value=${n + 1}>
          <details>
            <summary>
              ${
                url
                  ? html`<a href=${url} target="_blank" rel="noopener noreferrer nofollow" data-source-link=${index}
                      >${name}</a
                    >`
                  : name
              }
            </summary>
            ${(citation.partitions ?? []).map(
              p =>
                html`<blockquote>
                  ${p.text}
                  ${
                    typeof p.relevance === 'number'
                      ? html`<div class="relevance">${strings.relevance(percent.format(p.relevance))}</div>`
                      : nothing
                  }
                </blockquote>`,
            )}
          </details>
        </li>`;
      })}
    </ol>
  </div>`;
}

export function renderMessage(
  owner: object,
  item: ChatItem,
  strings: Strings,
  actions: MessageActions,
  isLast: boolean,
  percent: Intl.NumberFormat,
) {
  if (item.role === 'user') {
    return html`<div class="message user ${item.status === 'queued' ? 'queued' : ''}" part="message user-message">${item.text}</div>`;
  }
  const streaming = item.status === 'sending' || item.status === 'streaming';
  const view = viewFor(owner, item.key, strings);
  const parts = item.text ? view.render(item.text, !streaming) : [];
  const failed = item.status === 'error' || item.status === 'stopped';
  return html`<div class="message assistant" part="message assistant-message" aria-busy=${streaming ? 'true' : 'false'}>
    ${
      streaming && !item.text
        ? html`<span class="typing" role="status" aria-label=${strings.typing}
            ><span></span><span></span><span></span
          ></span>`
        : html`<div class="markdown">${parts}</div>`
    }
    ${item.citations.length && !streaming ? sources(item.citations, view.footnotes.order(), strings, percent) : nothing}
    ${
      failed
        ? html`<div class="notice" part="error">
            <span>${item.status === 'error' ? strings.incomplete : ''}</span>
            ${
              isLast && (item.retryable ?? true)
                ? html`<button type="button" class="text-button" part="retry-button" @click=${actions.retry}>
                    ${strings.retry}
                  </button>`
                : nothing
            }
          </div>`
        : nothing
    }
    ${
      item.status === 'done' && item.messageId
        ? html`<div class="reply-actions">
            <button
              type="button"
              class="icon-button"
              aria-label=${strings.helpful}
              aria-pressed=${item.feedback === 'up' ? 'true' : 'false'}
              @click=${() => actions.feedback(item, 'up')}
            >
              ${thumb(false)}
            </button>
            <button
              type="button"
              class="icon-button"
              aria-label=${strings.notHelpful}
              aria-pressed=${item.feedback === 'down' ? 'true' : 'false'}
              @click=${() => actions.feedback(item, 'down')}
            >
              ${thumb(true)}
            </button>
          </div>`
        : nothing
    }
  </div>`;
}
