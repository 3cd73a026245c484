/**
 * @module
 * The Conversation Service emulator: `createEmulator(options)` (web-standard `fetch`), its personas and faults.
 * The Node listeners are in `./node.js`.
 */
export { createEmulator } from './app.js';
export type { Emulator, EmulatorOptions } from './app.js';
export { Faults, noFaults } from './faults.js';
export type { FaultSettings, FaultSettingsInput, FaultTarget } from './faults.js';
export { defaultPersonas, parsePersonas } from './personas.js';
export type { Persona, PersonaDocument } from './personas.js';
export type { OpenAiOptions } from './replies.js';
export { seedConversations } from './seed.js';
export type { SeedOptions } from './seed.js';
