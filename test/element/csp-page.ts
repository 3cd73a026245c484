// Loaded by the strict-CSP host page the CSP test opens in a frame: records every violation, then chats.
import '../../src/element/define.js';
import type { PersonaChat } from '../../src/element/persona-chat.js';

const violations: string[] = [];
document.addEventListener('securitypolicyviolation', event =>
  violations.push(`${event.violatedDirective} ${event.blockedURI}`),
);
const outcome = (async () => {
  const el = document.querySelector<PersonaChat>('persona-chat')!;
  await el.updateComplete;
  const reply = await el.send('How long does shipping take? <img src=x onerror=alert(1)> [x](javascript:alert(1))');
  // The reply rendered whole: the status the element reflects says it ended, and its last update is done.
  await new Promise<void>(resolve => {
    const look = () =>
      ['done', 'stopped', 'failed', 'interrupted'].includes(el.getAttribute('turn-status') ?? '')
        ? resolve()
        : requestAnimationFrame(look);
    look();
  });
  await el.updateComplete;
  // A moment for a violation to be reported, had there been one: the page checks that none comes.
  await new Promise(resolve => setTimeout(resolve, 200));
  const root = el.shadowRoot!;
  return {
    content: reply.content,
    footnotes: root.querySelectorAll('sup.cite a').length,
    sources: root.querySelectorAll('[part="citations"] li').length,
    styled: getComputedStyle(root.querySelector('[part="send-button"]')!).borderRadius,
  };
})();
Object.assign(window, { chatOutcome: outcome, violations });
