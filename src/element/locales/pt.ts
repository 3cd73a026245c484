/** Portuguese. */
import type { Strings } from '../strings.js';
import { formats } from './format.js';

const { n, plural } = formats('pt');

export default {
  subheading: '',
  heading: 'Chat',
  placeholder: 'Escreva uma mensagem…',
  open: 'Abrir o chat',
  close: 'Fechar o chat',
  send: 'Enviar',
  stop: 'Parar',
  retry: 'Tentar novamente',
  newConversation: 'Nova conversa',
  typing: 'Escrevendo…',
  you: 'Você',
  assistant: 'Assistente',
  sources: 'Fontes',
  copy: 'Copiar',
  copied: 'Copiado',
  incomplete: 'Esta resposta está incompleta.',
  notAnswered: 'Esta mensagem não foi respondida.',
  stopped: 'Parado.',
  interrupted: 'Esta resposta foi interrompida.',
  newMessages: 'Novas mensagens',
  helpful: 'Útil',
  notHelpful: 'Não foi útil',
  errorGeneric: 'Algo deu errado. Tente novamente.',
  errorNetwork: 'Não foi possível conectar ao chat. Verifique sua conexão e tente novamente.',
  errorBusy: 'O assistente está ocupado. Tente novamente em instantes.',
  errorRateLimited: 'Você está enviando mensagens rápido demais. Aguarde um momento.',
  errorTooManySessions: 'Muitos chats foram abertos daqui em pouco tempo. Tente novamente em um minuto.',
  errorSession: 'Não foi possível iniciar o chat aqui.',
  errorTooLong: 'Essa mensagem é longa demais.',
  errorConfig: 'Este chat não está configurado corretamente.',
  errorInterrupted: 'A resposta foi interrompida. Você pode tentar novamente.',
  source: x => `Fonte ${n(x)}`,
  charactersLeft: x => plural(x, { one: 'Resta # caractere', other: 'Restam # caracteres' }),
  relevance: p => `Relevância ${p}`,
  said: name => `${name} disse:`,
} satisfies Strings;
