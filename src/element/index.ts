/**
 * @module
 * The `<persona-chat>` element class and its events, with no side effects. Import `persona-chat/define` to register
 * the tag.
 */
export { PersonaChat } from './persona-chat.js';
export * from './events.js';
export { PersonaChatError } from './errors.js';
export type { Strings } from './strings.js';
