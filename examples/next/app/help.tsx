'use client';
import { useState } from 'react';
import { HelpChat } from './help-chat';

/** The help chat, and the last reply as the page's own state shows it. */
export function Help() {
  const [reply, setReply] = useState('');
  return (
    <>
      <HelpChat page="/next" onReply={setReply} />
      <output>{reply}</output>
    </>
  );
}
