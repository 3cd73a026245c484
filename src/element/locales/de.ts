/** German. */
import type { Strings } from '../strings.js';
import { formats } from './format.js';

const { n, plural } = formats('de');

export default {
  subheading: '',
  heading: 'Chat',
  placeholder: 'Nachricht eingeben…',
  open: 'Chat öffnen',
  close: 'Chat schließen',
  send: 'Senden',
  stop: 'Stopp',
  retry: 'Erneut versuchen',
  newConversation: 'Neue Unterhaltung',
  typing: 'Schreibt…',
  you: 'Sie',
  assistant: 'Assistent',
  sources: 'Quellen',
  copy: 'Kopieren',
  copied: 'Kopiert',
  incomplete: 'Diese Antwort ist unvollständig.',
  notAnswered: 'Auf diese Nachricht gibt es noch keine Antwort.',
  stopped: 'Angehalten.',
  interrupted: 'Diese Antwort wurde unterbrochen.',
  newMessages: 'Neue Nachrichten',
  helpful: 'Hilfreich',
  notHelpful: 'Nicht hilfreich',
  errorGeneric: 'Etwas ist schiefgelaufen. Bitte versuchen Sie es erneut.',
  errorNetwork: 'Der Chat ist nicht erreichbar. Prüfen Sie Ihre Verbindung und versuchen Sie es erneut.',
  errorBusy: 'Der Assistent ist gerade ausgelastet. Bitte versuchen Sie es gleich noch einmal.',
  errorRateLimited: 'Sie senden zu schnell Nachrichten. Bitte warten Sie einen Moment.',
  errorTooManySessions:
    'Von hier wurden in kurzer Zeit zu viele Chats geöffnet. Bitte versuchen Sie es in einer Minute erneut.',
  errorSession: 'Der Chat konnte hier nicht gestartet werden.',
  errorTooLong: 'Diese Nachricht ist zu lang.',
  errorConfig: 'Dieser Chat ist nicht richtig eingerichtet.',
  errorInterrupted: 'Die Antwort wurde unterbrochen. Sie können es erneut versuchen.',
  source: x => `Quelle ${n(x)}`,
  charactersLeft: x => plural(x, { one: 'Noch # Zeichen', other: 'Noch # Zeichen' }),
  relevance: p => `Relevanz ${p}`,
  suggestions: 'Vorgeschlagene Fragen',
  unread: x => plural(x, { one: '# neue Antwort', other: '# neue Antworten' }),
  said: name => `${name} sagt:`,
} satisfies Strings;
