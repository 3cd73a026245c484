// A reply as markdown, and the conversation as a markdown file: what it says of each message, from a conversation
// state made by hand.
import { expect } from '@open-wc/testing';
import { replyMarkdown, transcript } from '../../src/element/keep.js';
import { applyEvent, initialState, timeline } from '../../src/element/state.js';
import type { ChatEvent, ChatState } from '../../src/element/state.js';
import { en, resolveStrings } from '../../src/element/strings.js';

const apply = (...events: ChatEvent[]) => events.reduce(applyEvent, initialState);
const t = resolveStrings({ heading: 'Juniper' });
const when = (iso: string) =>
  new Intl.DateTimeFormat('en', { dateStyle: 'medium', timeStyle: 'short' }).format(new Date(iso));

describe('transcript', () => {
  it('writes the title, then each message after its speaker and time, and each reply with its sources', () => {
    const state: ChatState = apply(
      {
        type: 'restored',
        conversationId: 'c1',
        messages: [
          {
            id: 'm1',
            role: 'user',
            content: 'Do you rent tents?',
            createdAt: '2026-11-28T09:00:00Z',
            runId: null,
            feedback: null,
            citations: [],
          },
          {
            id: 'm2',
            role: 'assistant',
            content: 'Yes [1].',
            createdAt: '2026-11-28T09:00:05Z',
            runId: null,
            feedback: null,
            citations: [{ sourceName: 'Rentals', sourceUrl: 'https://example.com/rentals' }],
          },
        ],
        runs: [],
        citations: () => [],
      },
      { type: 'queued', id: 'a', key: 'k-a', text: 'How long?' },
      { type: 'accepting', id: 'a' },
      { type: 'accepted', id: 'a', attempt: 1 },
      { type: 'delta', id: 'a', text: 'Three days', eventId: '1-1' },
      { type: 'stopped', id: 'a' },
      { type: 'queued', id: 'b', key: 'k-b', text: 'And returns?' },
      { type: 'accepting', id: 'b' },
      { type: 'failed', id: 'b', code: 'upstream_error', retryable: true },
    );
    const sent = Date.parse('2026-11-28T09:01:00Z');
    const text = transcript(timeline(state), key => (key === 'k-a' ? sent : undefined), 'Juniper', t, 'en');
    expect(text).to.equal(
      [
        '# Juniper',
        `**You** (${when('2026-11-28T09:00:00Z')})`,
        'Do you rent tents?',
        `**Juniper** (${when('2026-11-28T09:00:05Z')})`,
        'Yes [1].\n\nSources:\n\n1. [Rentals](<https://example.com/rentals>)',
        `**You** (${when('2026-11-28T09:01:00Z')})`,
        'How long?',
        '**Juniper**',
        `Three days\n\n_${en.stopped}_`,
        '**You**',
        'And returns?',
        '**Juniper**',
        `_${en.notAnswered}_`,
      ].join('\n\n') + '\n',
    );
  });

  it('is the title alone for an empty conversation', () => {
    expect(transcript(timeline(initialState), () => undefined, 'Juniper', t, 'en')).to.equal('# Juniper\n');
  });
});

describe('replyMarkdown', () => {
  it('is the text alone without sources', () => {
    expect(replyMarkdown('Yes, we **do**.', [], en)).to.equal('Yes, we **do**.');
  });

  it('lists the sources after the text, numbered as the markers number them, linked where they have a web address', () => {
    const citations = [
      { sourceName: 'Tent rentals [2026]', sourceUrl: 'https://example.com/tents (new)' },
      { documentId: 'policy.pdf' },
      { sourceName: 'A script', sourceUrl: 'javascript:alert(1)' },
      {},
    ];
    expect(replyMarkdown('We rent tents [1], see the policy [2].', citations, en)).to.equal(
      'We rent tents [1], see the policy [2].\n\nSources:\n\n' +
        '1. [Tent rentals \\[2026\\]](<https://example.com/tents (new)>)\n' +
        '2. policy.pdf\n' +
        '3. A script\n' +
        '4. Source 4',
    );
  });
});
