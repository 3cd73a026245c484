/**
 * How `custom-elements.json` is made: from the element's JSDoc, listing only its public API, with module paths
 * pointing at the files the package ships (`dist/element/*.js`, not the `src/` it is analysed from).
 */
const shipped = path => path.replace(/^src\//, 'dist/').replace(/\.ts$/, '.js');

/** `persona-chat-citation` → `PersonaChatCitationEvent`, the class of each event (`src/element/events.ts`). */
const eventClass = name => `${name.replace(/(^|-)([a-z])/g, (_, dash, c) => c.toUpperCase())}Event`;

/** @type {import('@custom-elements-manifest/analyzer').Plugin} */
const publicApi = {
  name: 'persona-chat-public-api',
  packageLinkPhase({ customElementsManifest }) {
    for (const module of customElementsManifest.modules) {
      module.path = shipped(module.path);
      for (const declaration of module.declarations ?? []) {
        if (!declaration.customElement) continue;
        // Internal state is declared with the reactive properties (`state: true`), and has no attribute.
        const hidden = member => (member.privacy && member.privacy !== 'public') || member.name.startsWith('#');
        const internal = new Set(declaration.members?.filter(hidden).map(member => member.name));
        declaration.attributes = declaration.attributes?.filter(attribute => !internal.has(attribute.fieldName));
        declaration.members = declaration.members?.filter(member => !member.static && !hidden(member));
        // The events the JSDoc names (`@fires`), each with its class. The analyser also reads every
        // `dispatchEvent(new …)` and names those after the constructor's first argument: dropped.
        declaration.events = declaration.events
          ?.filter(event => event.name?.startsWith('persona-chat-') && !event.type)
          .map(event => ({ ...event, type: { text: eventClass(event.name) } }));
      }
      for (const entry of module.exports ?? []) {
        if (entry.declaration?.module) entry.declaration.module = shipped(entry.declaration.module);
      }
    }
  },
};

export default {
  globs: ['src/element/persona-chat.ts'],
  outdir: '.',
  litelement: true,
  // package.json names the manifest already; the analyser would otherwise rewrite it to each --outdir it is given.
  packagejson: false,
  plugins: [publicApi],
};
