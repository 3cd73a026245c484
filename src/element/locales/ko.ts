/** Korean. */
import type { Strings } from '../strings.js';
import { formats } from './format.js';

const { n, plural } = formats('ko');

export default {
  subheading: '',
  heading: '채팅',
  placeholder: '메시지를 입력하세요…',
  open: '채팅 열기',
  close: '채팅 닫기',
  send: '보내기',
  stop: '중지',
  retry: '다시 시도',
  newConversation: '새 대화',
  typing: '입력 중…',
  you: '나',
  assistant: '어시스턴트',
  sources: '출처',
  copy: '복사',
  copied: '복사됨',
  incomplete: '이 답변은 완전하지 않습니다.',
  notAnswered: '이 메시지에는 아직 답변이 없습니다.',
  stopped: '중지됨.',
  interrupted: '이 답변이 중단되었습니다.',
  newMessages: '새 메시지',
  helpful: '도움이 됨',
  notHelpful: '도움이 안 됨',
  errorGeneric: '문제가 발생했습니다. 다시 시도해 주세요.',
  errorNetwork: '채팅에 연결할 수 없습니다. 연결을 확인하고 다시 시도해 주세요.',
  errorBusy: '어시스턴트가 바쁩니다. 잠시 후 다시 시도해 주세요.',
  errorRateLimited: '메시지를 너무 빨리 보내고 있습니다. 잠시 기다려 주세요.',
  errorTooManySessions: '짧은 시간에 너무 많은 채팅이 열렸습니다. 1분 후에 다시 시도해 주세요.',
  errorSession: '여기에서는 채팅을 시작할 수 없습니다.',
  errorTooLong: '메시지가 너무 깁니다.',
  errorConfig: '이 채팅이 올바르게 설정되지 않았습니다.',
  errorInterrupted: '답변이 중단되었습니다. 다시 시도할 수 있습니다.',
  source: x => `출처 ${n(x)}`,
  charactersLeft: x => plural(x, { other: '#자 남음' }),
  relevance: p => `관련성 ${p}`,
  said: name => `${name}의 답변:`,
} satisfies Strings;
