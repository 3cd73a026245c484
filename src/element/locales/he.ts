/** Hebrew. */
import type { Strings } from '../strings.js';
import { formats } from './format.js';

const { n, plural } = formats('he');

export default {
  subheading: '',
  heading: 'צ׳אט',
  placeholder: 'כתבו הודעה…',
  open: 'פתיחת הצ׳אט',
  close: 'סגירת הצ׳אט',
  send: 'שליחה',
  stop: 'עצירה',
  retry: 'ניסיון חוזר',
  newConversation: 'שיחה חדשה',
  typing: 'מקליד…',
  you: 'את/ה',
  assistant: 'העוזר',
  sources: 'מקורות',
  copy: 'העתקה',
  copied: 'הועתק',
  incomplete: 'התשובה הזו אינה שלמה.',
  notAnswered: 'ההודעה הזו לא נענתה.',
  stopped: 'נעצר.',
  interrupted: 'התשובה הזו נקטעה.',
  newMessages: 'הודעות חדשות',
  helpful: 'מועיל',
  notHelpful: 'לא מועיל',
  errorGeneric: 'משהו השתבש. נסו שוב.',
  errorNetwork: 'אין חיבור לצ׳אט. בדקו את החיבור ונסו שוב.',
  errorBusy: 'העוזר עסוק כרגע. נסו שוב בעוד רגע.',
  errorRateLimited: 'אתם שולחים הודעות מהר מדי. המתינו רגע.',
  errorTooManySessions: 'נפתחו מכאן יותר מדי צ׳אטים בזמן קצר. נסו שוב בעוד דקה.',
  errorSession: 'לא ניתן להפעיל כאן את הצ׳אט.',
  errorTooLong: 'ההודעה ארוכה מדי.',
  errorConfig: 'הצ׳אט הזה לא הוגדר כראוי.',
  errorInterrupted: 'התשובה נקטעה. אפשר לנסות שוב.',
  source: x => `מקור ${n(x)}`,
  charactersLeft: x => plural(x, { one: 'נותר תו אחד', other: 'נותרו # תווים' }),
  relevance: p => `רלוונטיות ${p}`,
  said: name => `${name} אמר/ה:`,
} satisfies Strings;
