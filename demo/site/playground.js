// The playground's live controls: attributes, custom properties and the emulator's faults.
let chat = document.querySelector('persona-chat');
const form = document.getElementById('controls');
const status = document.getElementById('fault-status');

form.addEventListener('input', event => {
  const control = event.target;
  const name = control.name;
  if (!name) return;
  if (name.startsWith('--')) {
    const value = control.value ? `${control.value}${control.dataset.unit ?? ''}` : '';
    if (value) chat.style.setProperty(name, value);
    else chat.style.removeProperty(name);
  } else if (name === 'persona-id') {
    // Another persona is another conversation: a fresh element with the same attributes and styles.
    const next = chat.cloneNode();
    next.setAttribute('persona-id', control.value);
    next.setAttribute('heading', control.selectedOptions[0].textContent.split(' ')[0]);
    chat.replaceWith(next);
    chat = next;
  } else {
    chat.setAttribute(name, control.value);
  }
});

async function faults(body) {
  const response = await fetch('/demo-api/faults', {
    method: body ? 'POST' : 'DELETE',
    headers: { 'content-type': 'application/json' },
    body: body ? JSON.stringify(body) : undefined,
  });
  return response.ok;
}

/** The next message goes out with an expired token, as if ten minutes had passed: the widget refreshes it once. */
function expireToken() {
  const real = chat.fetch;
  let used = false;
  chat.fetch = async (input, init) => {
    if (!used && String(input).endsWith('/messages')) {
      used = true;
      const headers = new Headers(init.headers);
      const token = (headers.get('authorization') ?? '').slice(7);
      const { token: expired } = await (
        await fetch(`/demo-api/expired-token?token=${encodeURIComponent(token)}`)
      ).json();
      headers.set('authorization', `Bearer ${expired}`);
      chat.fetch = real;
      return real(input, { ...init, headers });
    }
    return real(input, init);
  };
}

const actions = {
  slow: () => faults({ chunkDelayMs: 400 }).then(() => 'Replies now stream slowly.'),
  cut: () => faults({ cut: { afterChunks: 8, count: 1 } }).then(() => 'The next reply will break after 8 chunks.'),
  error: () =>
    faults({ status: { code: 500, count: 1, on: 'continue' } }).then(
      () => 'The next message gets a 500 from the service.',
    ),
  expire: () => (expireToken(), Promise.resolve('The next message goes out with an expired token.')),
  reset: () => faults(null).then(() => 'No faults.'),
};

form.addEventListener('click', async event => {
  const fault = event.target.dataset?.fault;
  if (!fault) return;
  status.textContent = await actions[fault]();
});
