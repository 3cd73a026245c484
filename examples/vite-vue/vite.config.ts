import vue from '@vitejs/plugin-vue';
import { defineConfig } from 'vite';

// The backend (persona-chat-server) runs beside Vite; the page's /persona-chat requests go to it.
const backend = process.env.PERSONA_CHAT_BACKEND ?? 'http://127.0.0.1:3000';

export default defineConfig({
  plugins: [
    // <persona-chat> is a custom element, not a Vue component.
    vue({ template: { compilerOptions: { isCustomElement: tag => tag === 'persona-chat' } } }),
  ],
  server: { proxy: { '/persona-chat': backend } },
  preview: { proxy: { '/persona-chat': backend } },
});
