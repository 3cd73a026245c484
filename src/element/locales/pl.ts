/** Polish. */
import type { Strings } from '../strings.js';
import { formats } from './format.js';

const { n, plural } = formats('pl');

export default {
  subheading: '',
  heading: 'Czat',
  placeholder: 'Napisz wiadomość…',
  open: 'Otwórz czat',
  close: 'Zamknij czat',
  send: 'Wyślij',
  stop: 'Zatrzymaj',
  retry: 'Spróbuj ponownie',
  newConversation: 'Nowa rozmowa',
  typing: 'Pisze…',
  you: 'Ty',
  assistant: 'Asystent',
  sources: 'Źródła',
  copy: 'Kopiuj',
  copied: 'Skopiowano',
  incomplete: 'Ta odpowiedź jest niepełna.',
  notAnswered: 'Na tę wiadomość nie ma odpowiedzi.',
  stopped: 'Zatrzymano.',
  interrupted: 'Ta odpowiedź została przerwana.',
  newMessages: 'Nowe wiadomości',
  helpful: 'Pomocne',
  notHelpful: 'Niepomocne',
  errorGeneric: 'Coś poszło nie tak. Spróbuj ponownie.',
  errorNetwork: 'Nie można połączyć się z czatem. Sprawdź połączenie i spróbuj ponownie.',
  errorBusy: 'Asystent jest zajęty. Spróbuj ponownie za chwilę.',
  errorRateLimited: 'Wysyłasz wiadomości zbyt szybko. Poczekaj chwilę.',
  errorTooManySessions: 'Z tego miejsca otwarto zbyt wiele czatów w krótkim czasie. Spróbuj ponownie za minutę.',
  errorSession: 'Nie udało się tu uruchomić czatu.',
  errorTooLong: 'Ta wiadomość jest za długa.',
  errorConfig: 'Ten czat nie jest poprawnie skonfigurowany.',
  errorInterrupted: 'Odpowiedź została przerwana. Możesz spróbować ponownie.',
  source: x => `Źródło ${n(x)}`,
  charactersLeft: x => plural(x, { one: 'Pozostał # znak', few: 'Pozostały # znaki', other: 'Pozostało # znaków' }),
  relevance: p => `Trafność ${p}`,
  said: name => `${name} napisał(a):`,
} satisfies Strings;
