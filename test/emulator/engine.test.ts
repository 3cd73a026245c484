import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  KnowledgeBase,
  citationsFor,
  composeReply,
  countTokens,
  processTerm,
  terms,
  words,
} from '../../src/emulator/engine.js';
import type { Retrieved } from '../../src/emulator/engine.js';
import { parsePersonas } from '../../src/emulator/personas.js';
import type { ChatResponse } from '../../src/service/types.js';
import { ada, createPersona, inProcess } from '../support/service.js';

describe('the built-in reply engine', () => {
  it('numbers citations in order of first appearance, one per document', async () => {
    const { request } = inProcess();
    const { conversationId } = await createPersona(request, 'u', ada.personaId);
    const res = await request('PATCH', `/conversations/${conversationId}/chat`, {
      message: 'How do tokens and the backend keep the API key safe?',
    });
    const reply = (await res.json()) as ChatResponse;
    const text = reply.choices[0]!.message!.content!;
    const markers = [...text.matchAll(/\[(\d+)\]/g)].map(m => Number(m[1]));
    assert.deepEqual(
      markers,
      reply.citations!.map((_, i) => i + 1),
    );
    assert.equal(new Set(reply.citations!.map(c => c.documentId)).size, reply.citations!.length);
  });

  it('answers an uncovered question honestly, without citations', async () => {
    const { request } = inProcess();
    const { conversationId } = await createPersona(request);
    const reply = (await (
      await request('PATCH', `/conversations/${conversationId}/chat`, { message: 'What is the capital of Peru?' })
    ).json()) as ChatResponse;
    assert.match(reply.choices[0]!.message!.content!, /^I don't know that/);
    assert.deepEqual(reply.citations, []);
  });

  describe('on a persona of its own', () => {
    const [rowan] = parsePersonas({
      personas: [
        {
          personaId: '5b0c8f3e-2f0e-4b8a-9a55-0d6f1f3c2a11',
          personaVersionId: '0f4d2c1b-8e7a-4c3d-9b2a-1e0f9d8c7b6a',
          name: 'Rowan',
          index: 'library',
          greeting: 'Hello! Ask me about the library.',
          style: { lead: ["Here's what I found."], unknown: "I don't know that." },
          documents: [
            {
              documentId: 'hours',
              title: 'Opening hours',
              url: 'https://library.example.com/hours',
              lastUpdate: '2026-10-01T00:00:00Z',
              tags: { topic: ['visiting'] },
              passages: ['The library opens at nine.', 'It closes at six, and at one on Saturdays.'],
            },
            {
              documentId: 'cards',
              title: 'Library cards',
              passages: ['A library card is free for residents. Bring proof of address. Lost cards cost two dollars.'],
            },
          ],
        },
      ],
    });
    const kb = new KnowledgeBase(rowan!);

    it('reads words as its index does: lower case, without stopwords or punctuation, common endings stripped', () => {
      assert.deepEqual(
        [
          'Returns',
          'the',
          'a',
          'camping',
          'batteries',
          'boxes',
          'glass',
          'rented',
          "Juniper's",
          '(tents)',
          '"hello,"',
        ].map(processTerm),
        ['return', null, null, 'camp', 'battery', 'box', 'glass', 'rent', 'juniper', 'tent', null],
      );
      assert.deepEqual(terms('How do I return gear/tents?'), ['return', 'gear', 'tent']);
    });

    it('retrieves the passages a question matches, best first, scored against the best', () => {
      const found = kb.retrieve('When does the library open?');
      assert.deepEqual(
        found.map(r => r.passage.id),
        ['hours#0', 'cards#0'],
      );
      assert.equal(found[0]!.relevance, 1);
      assert.ok(found[1]!.relevance > 0 && found[1]!.relevance < 1, 'relative to the best match');
      assert.deepEqual(
        kb.retrieve('Saturdays').map(r => r.passage.id),
        ['hours#1'],
      );
      assert.deepEqual(kb.retrieve('What is the capital of Peru?'), [], 'nothing for what no passage holds');
      assert.deepEqual(kb.retrieve('the and of'), [], 'nothing for a question of stopwords');
    });

    it('cites each document once, in order of first appearance, with two of its passages at most', () => {
      const passage = (documentId: string, partitionNumber: number): Retrieved => ({
        passage: {
          id: `${documentId}#${partitionNumber}`,
          documentId,
          fileId: `${documentId}.md`,
          title: documentId,
          url: undefined,
          contentType: 'text/markdown',
          lastUpdate: '2026-01-01T00:00:00.000Z',
          tags: {},
          text: `passage ${partitionNumber} of ${documentId}`,
          partitionNumber,
        },
        relevance: 1,
      });
      const citations = citationsFor(rowan!, [
        passage('hours', 0),
        passage('cards', 0),
        passage('hours', 1),
        passage('hours', 2),
      ]);
      assert.deepEqual(
        citations.map(c => [c.link, c.partitions!.map(p => [p.partitionNumber, p.sectionNumber])]),
        [
          [
            'library/hours/hours.md',
            [
              [0, 1],
              [1, 2],
            ],
          ],
          ['library/cards/cards.md', [[0, 1]]],
        ],
      );
    });

    it("leads a reply with one of the persona's leads, then one paragraph per source with its best sentences", () => {
      const reply = composeReply(kb, 'How much does a lost card cost?');
      assert.equal(
        reply.text,
        "Here's what I found.\n\n**Library cards:** A library card is free for residents. Lost cards cost two dollars. [1]",
      );
      assert.deepEqual(
        reply.citations.map(c => c.documentId),
        ['cards'],
      );
    });

    it("greets back with the persona's greeting, and answers what no document covers with its own line", () => {
      assert.deepEqual(composeReply(kb, 'Hello!'), { text: 'Hello! Ask me about the library.', citations: [] });
      assert.deepEqual(composeReply(kb, 'capital of Peru'), { text: "I don't know that.", citations: [] });
      const plain = new KnowledgeBase({ ...rowan!, greeting: '' });
      assert.equal(composeReply(plain, 'Good morning').text, "Hello! I'm Rowan. What would you like to know?");
    });

    it('splits a reply into words that join back to the exact text, and counts a token per four characters', () => {
      assert.deepEqual(words('Hi  there,\nfriend '), ['Hi  ', 'there,\n', 'friend ']);
      assert.deepEqual(['', 'abcd', 'abcde'].map(countTokens), [0, 1, 2]);
    });
  });
});
