import { StrictMode, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { PersonaChat } from 'persona-chat/react';

function App() {
  const [reply, setReply] = useState('');
  return (
    <main>
      <h1>Help</h1>
      <PersonaChat
        endpoint="/persona-chat"
        mode="inline"
        heading="Help"
        metadata={{ page: '/vite-react' }}
        onMessage={event => setReply(event.detail.content)}
      />
      <output>{reply}</output>
    </main>
  );
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
