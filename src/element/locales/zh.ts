/** Chinese (Simplified). */
import type { Strings } from '../strings.js';
import { formats } from './format.js';

const { n, plural } = formats('zh');

export default {
  subheading: '',
  heading: '聊天',
  placeholder: '输入消息…',
  open: '打开聊天',
  close: '关闭聊天',
  send: '发送',
  stop: '停止',
  retry: '重试',
  newConversation: '新对话',
  typing: '正在输入…',
  you: '你',
  assistant: '助手',
  sources: '来源',
  copy: '复制',
  copied: '已复制',
  incomplete: '此回复不完整。',
  notAnswered: '此消息尚未得到回复。',
  stopped: '已停止。',
  interrupted: '此回复被中断了。',
  newMessages: '新消息',
  helpful: '有帮助',
  notHelpful: '没有帮助',
  errorGeneric: '出了点问题，请重试。',
  errorNetwork: '无法连接到聊天。请检查网络连接后重试。',
  errorBusy: '助手正忙，请稍后再试。',
  errorRateLimited: '您发送消息太快了，请稍等片刻。',
  errorTooManySessions: '短时间内从这里打开的聊天过多，请一分钟后再试。',
  errorSession: '无法在此处开始聊天。',
  errorTooLong: '这条消息太长了。',
  errorConfig: '此聊天未正确设置。',
  errorInterrupted: '回复被中断了，您可以重试。',
  source: x => `来源 ${n(x)}`,
  charactersLeft: x => plural(x, { other: '还可输入 # 个字符' }),
  relevance: p => `相关度 ${p}`,
  said: name => `${name}说：`,
} satisfies Strings;
