/** Spanish. */
import type { Strings } from '../strings.js';
import { formats } from './format.js';

const { n, plural } = formats('es');

export default {
  subheading: '',
  heading: 'Chat',
  placeholder: 'Escribe un mensaje…',
  open: 'Abrir el chat',
  close: 'Cerrar el chat',
  send: 'Enviar',
  stop: 'Detener',
  retry: 'Reintentar',
  newConversation: 'Nueva conversación',
  typing: 'Escribiendo…',
  you: 'Tú',
  assistant: 'Asistente',
  sources: 'Fuentes',
  copy: 'Copiar',
  copied: 'Copiado',
  incomplete: 'Esta respuesta está incompleta.',
  notAnswered: 'Este mensaje no ha recibido respuesta.',
  stopped: 'Detenido.',
  interrupted: 'Esta respuesta se interrumpió.',
  newMessages: 'Mensajes nuevos',
  helpful: 'Útil',
  notHelpful: 'No útil',
  errorGeneric: 'Algo salió mal. Inténtalo de nuevo.',
  errorNetwork: 'No se puede conectar con el chat. Comprueba tu conexión e inténtalo de nuevo.',
  errorBusy: 'El asistente está ocupado. Inténtalo de nuevo en un momento.',
  errorRateLimited: 'Estás enviando mensajes demasiado rápido. Espera un momento.',
  errorTooManySessions: 'Se han abierto demasiados chats desde aquí en poco tiempo. Inténtalo de nuevo en un minuto.',
  errorSession: 'No se pudo iniciar el chat aquí.',
  errorTooLong: 'Ese mensaje es demasiado largo.',
  errorConfig: 'Este chat no está bien configurado.',
  errorInterrupted: 'La respuesta se interrumpió. Puedes volver a intentarlo.',
  source: x => `Fuente ${n(x)}`,
  charactersLeft: x => plural(x, { one: 'Queda # carácter', other: 'Quedan # caracteres' }),
  relevance: p => `Relevancia ${p}`,
  said: name => `${name} dijo:`,
} satisfies Strings;
