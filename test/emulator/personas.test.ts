import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultPersonas, parsePersonas } from '../../src/emulator/personas.js';
import { ada } from '../support/service.js';

describe('personas', () => {
  it('loads personas from a file and names the first bad field', () => {
    assert.throws(() => parsePersonas({ personas: [{ ...ada, personaId: 'not-a-uuid' }] }), /personas\.0\.personaId/);
    assert.throws(() => parsePersonas({ personas: [ada, ada] }), /appears twice/);
    assert.throws(() => parsePersonas({ personas: [] }), /personas/);
    const [one] = parsePersonas({
      personas: [{ personaId: ada.personaId, personaVersionId: ada.personaVersionId, name: 'Solo' }],
    });
    assert.equal(one!.name, 'Solo');
    assert.deepEqual(one!.documents, []);
  });

  it('fills what a personas file leaves out with the defaults', () => {
    const [rowan] = parsePersonas({
      personas: [
        {
          personaId: ada.personaId,
          personaVersionId: ada.personaVersionId,
          name: 'Rowan',
          documents: [{ documentId: 'hours', title: 'Opening hours', passages: ['The library opens at nine.'] }],
        },
      ],
    });
    assert.deepEqual(rowan, {
      personaId: ada.personaId,
      personaVersionId: ada.personaVersionId,
      name: 'Rowan',
      description: '',
      aiSystem: 'persona-chat-emulator',
      model: 'extractive-1',
      index: 'default',
      greeting: '',
      style: { lead: [], unknown: "I don't know that: it isn't covered by what I know." },
      documents: [
        {
          documentId: 'hours',
          title: 'Opening hours',
          contentType: 'text/markdown',
          tags: {},
          passages: ['The library opens at nine.'],
        },
      ],
    });
  });

  it('names the first bad field of a document', () => {
    const withDocument = (document: Record<string, unknown>) => ({
      personas: [
        { personaId: ada.personaId, personaVersionId: ada.personaVersionId, name: 'Rowan', documents: [document] },
      ],
    });
    assert.throws(
      () => parsePersonas(withDocument({ documentId: 'hours', title: 'Hours', passages: [] })),
      /personas\.0\.documents\.0\.passages/,
    );
    assert.throws(
      () => parsePersonas(withDocument({ documentId: 'hours', title: 'Hours', url: 'not a url', passages: ['x'] })),
      /personas\.0\.documents\.0\.url/,
    );
    assert.throws(() => parsePersonas('[]'), /Invalid personas file at \(root\)/);
  });

  it('ships the two demo personas, Ada and Juniper, each with a dozen documents or more', () => {
    assert.deepEqual(
      defaultPersonas.map(p => [p.name, p.personaId]),
      [
        ['Ada', 'd8357ade-fff8-4bd3-9194-fa5b172b45f8'],
        ['Juniper', '3e913ded-bf6d-4591-85bb-a2d9be56efd6'],
      ],
    );
    for (const persona of defaultPersonas) assert.ok(persona.documents.length >= 12, persona.name);
  });
});
