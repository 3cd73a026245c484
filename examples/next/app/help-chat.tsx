// A <persona-chat> in a React 19 component, server-rendered or not. The wrapper sets each prop the element has as a
// property (`metadata` too, also after hydration) and calls the `on…` props with the element's typed events.
'use client';
import { PersonaChat } from 'persona-chat/react';

export function HelpChat({ page, onReply }: { page: string; onReply: (text: string) => void }) {
  return (
    <PersonaChat
      endpoint="/persona-chat"
      mode="inline"
      heading="Help"
      metadata={{ page }}
      onMessage={event => onReply(event.detail.content)}
    />
  );
}
