/** Japanese. */
import type { Strings } from '../strings.js';
import { formats } from './format.js';

const { n, plural } = formats('ja');

export default {
  subheading: '',
  heading: 'チャット',
  placeholder: 'メッセージを入力…',
  open: 'チャットを開く',
  close: 'チャットを閉じる',
  send: '送信',
  stop: '停止',
  retry: '再試行',
  newConversation: '新しい会話',
  typing: '入力中…',
  you: 'あなた',
  assistant: 'アシスタント',
  sources: '出典',
  copy: 'コピー',
  copied: 'コピーしました',
  incomplete: 'この回答は途中で終わっています。',
  notAnswered: 'このメッセージにはまだ回答がありません。',
  stopped: '停止しました。',
  interrupted: 'この回答は中断されました。',
  newMessages: '新しいメッセージ',
  helpful: '役に立った',
  notHelpful: '役に立たなかった',
  errorGeneric: '問題が発生しました。もう一度お試しください。',
  errorNetwork: 'チャットに接続できません。接続を確認して、もう一度お試しください。',
  errorBusy: 'アシスタントは現在混み合っています。しばらくしてからもう一度お試しください。',
  errorRateLimited: 'メッセージの送信が速すぎます。少し待ってください。',
  errorTooManySessions: '短時間に多くのチャットが開かれました。1分後にもう一度お試しください。',
  errorSession: 'ここではチャットを開始できませんでした。',
  errorTooLong: 'メッセージが長すぎます。',
  errorConfig: 'このチャットは正しく設定されていません。',
  errorInterrupted: '回答が中断されました。もう一度お試しいただけます。',
  source: x => `出典 ${n(x)}`,
  charactersLeft: x => plural(x, { other: '残り#文字' }),
  relevance: p => `関連度 ${p}`,
  said: name => `${name}の回答：`,
} satisfies Strings;
