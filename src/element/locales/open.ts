/**
 * @module
 * What the launcher script says in every language, before any string table is loaded: its label (the `open` string
 * of the language's table: a test keeps them the same), and what it says where the panel would be when the chat's
 * file cannot be loaded (the site serves the launcher without the files beside it, or every try failed).
 */
export const launcherTexts: Record<string, [open: string, unavailable: string]> = {
  en: ['Open chat', 'The chat is unavailable.'],
  ar: ['فتح الدردشة', 'الدردشة غير متاحة.'],
  de: ['Chat öffnen', 'Der Chat ist nicht verfügbar.'],
  es: ['Abrir el chat', 'El chat no está disponible.'],
  fr: ['Ouvrir la discussion', 'La discussion est indisponible.'],
  he: ['פתיחת הצ׳אט', 'הצ׳אט אינו זמין.'],
  it: ['Apri la chat', 'La chat non è disponibile.'],
  ja: ['チャットを開く', 'チャットを利用できません。'],
  ko: ['채팅 열기', '채팅을 사용할 수 없습니다.'],
  nl: ['Chat openen', 'De chat is niet beschikbaar.'],
  pl: ['Otwórz czat', 'Czat jest niedostępny.'],
  pt: ['Abrir o chat', 'O chat não está disponível.'],
  zh: ['打开聊天', '聊天不可用。'],
};
