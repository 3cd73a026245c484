// React for the browser tests. React and react-dom ship as CommonJS only, which a browser cannot import and the
// test server does not convert, so this web-test-runner plugin bundles them once with esbuild into one ES module and
// answers the imports `react`, `react-dom` and `react-dom/client` with modules re-exporting their parts of it.
import { execFileSync } from 'node:child_process';
import { build } from 'esbuild';

const prefix = '/__react/';
/** Each specifier served, with the file it is served as. */
const modules = { react: 'react.js', 'react-dom': 'react-dom.js', 'react-dom/client': 'react-dom-client.js' };
const bundleName = 'bundle.js';
const identifier = name => name.replace(/\W/g, '_');

let bundle;
/** The one bundle holding React and react-dom, built on first use. */
async function bundled() {
  bundle ??= build({
    stdin: {
      contents: Object.keys(modules)
        .map(name => `export { default as ${identifier(name)} } from ${JSON.stringify(name)};`)
        .join('\n'),
      resolveDir: process.cwd(),
    },
    bundle: true,
    format: 'esm',
    write: false,
    define: { 'process.env.NODE_ENV': '"development"' },
    logLevel: 'silent',
  }).then(result => result.outputFiles[0].text);
  return bundle;
}

/**
 * The names a CommonJS package exports, read in a process of their own: React's development build wraps `console`
 * when loaded, and the test runner's console does not take it.
 */
const exportNames = name =>
  JSON.parse(
    execFileSync(process.execPath, ['-p', `JSON.stringify(Object.keys(require(${JSON.stringify(name)})))`], {
      encoding: 'utf8',
    }),
  );

/** A module re-exporting one package from the bundle: its default export, and each of its named exports. */
function facade(name) {
  const names = exportNames(name).filter(key => /^[A-Za-z_$][\w$]*$/.test(key) && key !== 'default');
  const local = identifier(name);
  return [
    `import { ${local} } from './${bundleName}';`,
    `export default ${local};`,
    `export const { ${names.join(', ')} } = ${local};`,
  ].join('\n');
}

export const reactEsm = {
  name: 'react-esm',
  resolveImport({ source }) {
    return source in modules ? prefix + modules[source] : undefined;
  },
  async serve(context) {
    if (!context.path.startsWith(prefix)) return undefined;
    const file = context.path.slice(prefix.length);
    if (file === bundleName) return { body: await bundled(), type: 'js' };
    const name = Object.keys(modules).find(key => modules[key] === file);
    return name ? { body: facade(name), type: 'js' } : undefined;
  },
};
