/** Arabic. */
import type { Strings } from '../strings.js';
import { formats } from './format.js';

const { plural } = formats('ar');

export default {
  subheading: '',
  heading: 'الدردشة',
  placeholder: 'اكتب رسالة…',
  open: 'فتح الدردشة',
  close: 'إغلاق الدردشة',
  send: 'إرسال',
  stop: 'إيقاف',
  retry: 'إعادة المحاولة',
  newConversation: 'محادثة جديدة',
  typing: 'يكتب…',
  you: 'أنت',
  assistant: 'المساعد',
  sources: 'المصادر',
  copy: 'نسخ',
  copied: 'تم النسخ',
  code: language => (language ? `شيفرة ${language}` : 'شيفرة برمجية'),
  incomplete: 'هذا الرد غير مكتمل.',
  notAnswered: 'لم يتم الرد على هذه الرسالة.',
  stopped: 'تم الإيقاف.',
  interrupted: 'انقطع هذا الرد.',
  newMessages: 'رسائل جديدة',
  helpful: 'مفيد',
  notHelpful: 'غير مفيد',
  errorGeneric: 'حدث خطأ ما. يرجى المحاولة مرة أخرى.',
  errorNetwork: 'تعذّر الوصول إلى الدردشة. تحقق من اتصالك وحاول مرة أخرى.',
  errorBusy: 'المساعد مشغول. يرجى المحاولة بعد قليل.',
  errorRateLimited: 'أنت ترسل الرسائل بسرعة كبيرة. يرجى الانتظار قليلاً.',
  errorTooManySessions: 'تم فتح عدد كبير جدًا من المحادثات من هنا خلال وقت قصير. يرجى المحاولة بعد دقيقة.',
  errorSession: 'تعذّر بدء الدردشة هنا.',
  errorTooLong: 'هذه الرسالة طويلة جدًا.',
  errorConfig: 'لم يتم إعداد هذه الدردشة بشكل صحيح.',
  errorInterrupted: 'انقطع الرد. يمكنك المحاولة مرة أخرى.',
  // The footnote it names shows its number in Latin digits; its name says the same number (a screen reader's
  // user hears what a sighted user sees), whatever digits the engine's Arabic numbers have.
  source: x => `المصدر ${x}`,
  charactersLeft: x =>
    plural(x, {
      zero: 'لم يتبقَّ أي حرف',
      one: 'تبقّى حرف واحد',
      two: 'تبقّى حرفان',
      few: 'تبقّت # أحرف',
      other: 'تبقّى # حرفًا',
    }),
  relevance: p => `مدى الصلة ${p}`,
  conversations: 'المحادثات',
  backToChat: 'العودة إلى الدردشة',
  rename: 'إعادة التسمية',
  delete: 'حذف',
  save: 'حفظ',
  cancel: 'إلغاء',
  untitled: 'محادثة بلا عنوان',
  more: 'عرض المزيد',
  noConversations: 'لا توجد محادثات بعد.',
  conversationName: 'اسم المحادثة',
  feedbackPrompt: 'ما الخطأ الذي حدث؟ (اختياري)',
  feedbackSend: 'إرسال الملاحظات',
  feedbackThanks: 'شكرًا على ملاحظاتك.',
  suggestions: 'أسئلة مقترحة',
  unread: x =>
    plural(x, {
      zero: 'لا ردود جديدة',
      one: 'رد جديد واحد',
      two: 'ردان جديدان',
      few: '# ردود جديدة',
      other: '# ردًا جديدًا',
    }),
  said: name => `قال ${name}:`,
  deleteQuestion: name => `حذف «${name}»؟`,
  loadingConversations: 'جارٍ تحميل المحادثات…',
  conversationCount: x =>
    plural(x, { zero: 'لا توجد محادثات', one: 'محادثة واحدة', two: 'محادثتان', few: '# محادثات', other: '# محادثة' }),
} satisfies Strings;
