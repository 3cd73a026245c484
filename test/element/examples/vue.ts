// A <persona-chat> in a Vue 3 component. With templates, tell the compiler it is a custom element:
// app.config.compilerOptions.isCustomElement = tag => tag === 'persona-chat'.
import 'persona-chat/define';
import type { PersonaChatMessageEvent } from 'persona-chat';
import { defineComponent, h, ref } from 'vue';

export const HelpChat = defineComponent({
  props: { page: { type: String, required: true } },
  setup(props) {
    const lastReply = ref('');
    return () =>
      h('persona-chat', {
        endpoint: '/persona-chat',
        mode: 'inline',
        heading: 'Help',
        '.metadata': { page: props.page },
        'onPersona-chat-message': (event: PersonaChatMessageEvent) => (lastReply.value = event.content),
      });
  },
});
