// A <persona-chat> in a React 19 component. React 19 sets object props (metadata) as properties and wires
// `on` + event-name props as listeners for custom events.
import 'persona-chat/define';
import type { PersonaChat, PersonaChatMessageEvent } from 'persona-chat';
import type { DetailedHTMLProps, HTMLAttributes } from 'react';

declare module 'react' {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace JSX {
    interface IntrinsicElements {
      'persona-chat': DetailedHTMLProps<HTMLAttributes<PersonaChat>, PersonaChat> & {
        endpoint: string;
        mode?: 'launcher' | 'inline';
        heading?: string;
        greeting?: string;
        metadata?: Record<string, string>;
        'onpersona-chat-message'?: (event: PersonaChatMessageEvent) => void;
      };
    }
  }
}

export function HelpChat({ page, onReply }: { page: string; onReply: (text: string) => void }) {
  return (
    <persona-chat
      endpoint="/persona-chat"
      mode="inline"
      heading="Help"
      metadata={{ page }}
      onpersona-chat-message={event => onReply(event.content)}
    />
  );
}
