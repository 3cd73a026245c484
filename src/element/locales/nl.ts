/** Dutch. */
import type { Strings } from '../strings.js';
import { formats } from './format.js';

const { n, plural } = formats('nl');

export default {
  subheading: '',
  heading: 'Chat',
  placeholder: 'Typ een bericht…',
  open: 'Chat openen',
  close: 'Chat sluiten',
  send: 'Versturen',
  stop: 'Stoppen',
  retry: 'Opnieuw proberen',
  newConversation: 'Nieuw gesprek',
  typing: 'Typt…',
  you: 'Jij',
  assistant: 'Assistent',
  sources: 'Bronnen',
  copy: 'Kopiëren',
  copied: 'Gekopieerd',
  incomplete: 'Dit antwoord is onvolledig.',
  notAnswered: 'Dit bericht is niet beantwoord.',
  stopped: 'Gestopt.',
  interrupted: 'Dit antwoord is onderbroken.',
  newMessages: 'Nieuwe berichten',
  helpful: 'Nuttig',
  notHelpful: 'Niet nuttig',
  errorGeneric: 'Er ging iets mis. Probeer het opnieuw.',
  errorNetwork: 'De chat is niet bereikbaar. Controleer je verbinding en probeer het opnieuw.',
  errorBusy: 'De assistent is bezet. Probeer het zo opnieuw.',
  errorRateLimited: 'Je verstuurt te snel berichten. Wacht even.',
  errorTooManySessions: 'Er zijn hier in korte tijd te veel chats geopend. Probeer het over een minuut opnieuw.',
  errorSession: 'De chat kon hier niet worden gestart.',
  errorTooLong: 'Dat bericht is te lang.',
  errorConfig: 'Deze chat is niet goed ingesteld.',
  errorInterrupted: 'Het antwoord is onderbroken. Je kunt het opnieuw proberen.',
  source: x => `Bron ${n(x)}`,
  charactersLeft: x => plural(x, { one: 'Nog # teken', other: 'Nog # tekens' }),
  relevance: p => `Relevantie ${p}`,
  said: name => `${name} zei:`,
} satisfies Strings;
