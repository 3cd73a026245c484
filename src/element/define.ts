/**
 * @module
 * Registers `<persona-chat>`. Safe to load twice: the second time does nothing.
 */
import { PersonaChat } from './persona-chat.js';

if (!customElements.get('persona-chat')) customElements.define('persona-chat', PersonaChat);

export { PersonaChat };
