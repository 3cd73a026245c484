/**
 * The layers of src/, checked by `npm run lint` (dependency-cruiser): no import runs in a circle, type imports
 * included, and none runs from a lower layer back up. From the bottom: the shared modules of src/ (protocol, JSON
 * body, CLI support), the service client, the emulator above the service; the backend and the element on top, each
 * blind to the other.
 */
const layer = (from, ...notTo) => ({ from: { path: from }, to: { path: notTo.length > 1 ? notTo : notTo[0] } });

export default {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import circle: split the module that both sides need, or move the shared part down a layer.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'shared-stays-at-the-bottom',
      severity: 'error',
      comment: 'The shared modules of src/ import nothing from the layers above them.',
      ...layer('^src/[^/]+[.]ts$', '^src/(service|emulator|server|element|react)/'),
    },
    {
      name: 'service-below-emulator-and-backend',
      severity: 'error',
      comment: 'The service client is used by the emulator and the backend, and knows neither.',
      ...layer('^src/service/', '^src/(emulator|server|element|react)/'),
    },
    {
      name: 'emulator-stands-for-the-service-only',
      severity: 'error',
      comment: 'The emulator is the service: it never reaches into the backend or the element.',
      ...layer('^src/emulator/', '^src/(server|element|react)/'),
    },
    {
      name: 'backend-without-browser-code',
      severity: 'error',
      comment: 'The backend never imports the element, nor the emulator it is tested against.',
      ...layer('^src/server/', '^src/(element|react|emulator)/'),
    },
    {
      name: 'element-without-server-code',
      severity: 'error',
      comment:
        'The browser bundle reaches only the shared modules: never the backend, the service client or the emulator.',
      ...layer('^src/(element|react)/', '^src/(server|service|emulator)/'),
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^src/emulator/data/' },
    // Type imports are imports too: a circle through types is a circle of design.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
