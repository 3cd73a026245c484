/** Italian. */
import type { Strings } from '../strings.js';
import { formats } from './format.js';

const { n, plural } = formats('it');

export default {
  subheading: '',
  heading: 'Chat',
  placeholder: 'Scrivi un messaggio…',
  open: 'Apri la chat',
  close: 'Chiudi la chat',
  send: 'Invia',
  stop: 'Interrompi',
  retry: 'Riprova',
  newConversation: 'Nuova conversazione',
  typing: 'Sta scrivendo…',
  you: 'Tu',
  assistant: 'Assistente',
  sources: 'Fonti',
  copy: 'Copia',
  copied: 'Copiato',
  incomplete: 'Questa risposta è incompleta.',
  notAnswered: 'Questo messaggio non ha ricevuto risposta.',
  stopped: 'Interrotto.',
  interrupted: 'Questa risposta è stata interrotta.',
  newMessages: 'Nuovi messaggi',
  helpful: 'Utile',
  notHelpful: 'Non utile',
  errorGeneric: 'Qualcosa è andato storto. Riprova.',
  errorNetwork: 'Impossibile raggiungere la chat. Controlla la connessione e riprova.',
  errorBusy: 'L’assistente è occupato. Riprova tra poco.',
  errorRateLimited: 'Stai inviando messaggi troppo velocemente. Attendi un momento.',
  errorTooManySessions: 'Da qui sono state aperte troppe chat in poco tempo. Riprova tra un minuto.',
  errorSession: 'Non è stato possibile avviare la chat qui.',
  errorTooLong: 'Questo messaggio è troppo lungo.',
  errorConfig: 'Questa chat non è configurata correttamente.',
  errorInterrupted: 'La risposta è stata interrotta. Puoi riprovare.',
  source: x => `Fonte ${n(x)}`,
  charactersLeft: x => plural(x, { one: 'Resta # carattere', other: 'Restano # caratteri' }),
  relevance: p => `Pertinenza ${p}`,
  said: name => `${name} ha detto:`,
} satisfies Strings;
