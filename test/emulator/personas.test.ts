import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parsePersonas } from '../../src/emulator/personas.js';
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
});
