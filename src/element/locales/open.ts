/**
 * @module
 * The launcher's label in every language, for the launcher script, which draws it before any string table is
 * loaded. Each is the `open` string of its language's table (a test keeps them the same).
 */
export const openLabels: Record<string, string> = {
  en: 'Open chat',
  ar: 'فتح الدردشة',
  de: 'Chat öffnen',
  es: 'Abrir el chat',
  fr: 'Ouvrir la discussion',
  he: 'פתיחת הצ׳אט',
  it: 'Apri la chat',
  ja: 'チャットを開く',
  ko: '채팅 열기',
  nl: 'Chat openen',
  pl: 'Otwórz czat',
  pt: 'Abrir o chat',
  zh: '打开聊天',
};
