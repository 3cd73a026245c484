/**
 * @module
 * The personas file: who the emulator's personas are and the documents each one answers from.
 */
import { z } from 'zod';
import defaultPersonasFile from './data/personas.json' with { type: 'json' };

const documentSchema = z.object({
  documentId: z.string().min(1),
  fileId: z.string().min(1).optional(),
  title: z.string().min(1),
  url: z.url().optional(),
  contentType: z.string().min(1).default('text/markdown'),
  lastUpdate: z.iso.datetime({ offset: true }).optional(),
  tags: z.record(z.string(), z.unknown()).default({}),
  passages: z.array(z.string().min(1)).min(1),
});

const personaSchema = z.object({
  personaId: z.uuid(),
  personaVersionId: z.uuid(),
  name: z.string().min(1),
  description: z.string().default(''),
  aiSystem: z.string().min(1).default('persona-chat-emulator'),
  model: z.string().min(1).default('extractive-1'),
  index: z.string().min(1).default('default'),
  greeting: z.string().default(''),
  style: z
    .object({
      lead: z.array(z.string()).default([]),
      unknown: z.string().min(1).default("I don't know that: it isn't covered by what I know."),
    })
    .default({ lead: [], unknown: "I don't know that: it isn't covered by what I know." }),
  documents: z.array(documentSchema).default([]),
});

export const personasFileSchema = z.object({ personas: z.array(personaSchema).min(1) });

export type Persona = z.infer<typeof personaSchema>;
export type PersonaDocument = z.infer<typeof documentSchema>;

/** Checks a parsed personas file; throws an Error naming the first bad field. */
export function parsePersonas(input: unknown): Persona[] {
  const result = personasFileSchema.safeParse(input);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new Error(`Invalid personas file at ${issue?.path.join('.') || '(root)'}: ${issue?.message}`);
  }
  const ids = new Set<string>();
  for (const persona of result.data.personas) {
    if (ids.has(persona.personaId))
      throw new Error(`Invalid personas file: personaId ${persona.personaId} appears twice`);
    ids.add(persona.personaId);
  }
  return result.data.personas;
}

/** The two demo personas shipped with the emulator. */
export const defaultPersonas: Persona[] = parsePersonas(defaultPersonasFile);
