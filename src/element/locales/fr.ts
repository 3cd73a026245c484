/** French. */
import type { Strings } from '../strings.js';
import { formats } from './format.js';

const { n, plural } = formats('fr');

export default {
  subheading: '',
  heading: 'Discussion',
  placeholder: 'Écrivez un message…',
  open: 'Ouvrir la discussion',
  close: 'Fermer la discussion',
  send: 'Envoyer',
  stop: 'Arrêter',
  retry: 'Réessayer',
  newConversation: 'Nouvelle conversation',
  typing: 'Écrit…',
  you: 'Vous',
  assistant: 'Assistant',
  sources: 'Sources',
  copy: 'Copier',
  copied: 'Copié',
  incomplete: 'Cette réponse est incomplète.',
  notAnswered: 'Ce message n’a pas reçu de réponse.',
  stopped: 'Arrêté.',
  interrupted: 'Cette réponse a été interrompue.',
  newMessages: 'Nouveaux messages',
  helpful: 'Utile',
  notHelpful: 'Pas utile',
  errorGeneric: 'Un problème est survenu. Veuillez réessayer.',
  errorNetwork: 'La discussion est injoignable. Vérifiez votre connexion et réessayez.',
  errorBusy: 'L’assistant est occupé. Veuillez réessayer dans un instant.',
  errorRateLimited: 'Vous envoyez des messages trop rapidement. Veuillez patienter un instant.',
  errorTooManySessions:
    'Trop de discussions ont été ouvertes depuis ici en peu de temps. Veuillez réessayer dans une minute.',
  errorSession: 'La discussion n’a pas pu démarrer ici.',
  errorTooLong: 'Ce message est trop long.',
  errorConfig: 'Cette discussion n’est pas correctement configurée.',
  errorInterrupted: 'La réponse a été interrompue. Vous pouvez réessayer.',
  source: x => `Source ${n(x)}`,
  charactersLeft: x => plural(x, { one: '# caractère restant', other: '# caractères restants' }),
  relevance: p => `Pertinence ${p}`,
  suggestions: 'Questions suggérées',
  unread: x => plural(x, { one: '# nouvelle réponse', other: '# nouvelles réponses' }),
  said: name => `${name} a dit :`,
} satisfies Strings;
