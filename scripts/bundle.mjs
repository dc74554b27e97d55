// After tsc: the CLI and the public API as one esbuild bundle over dist/, sharing chunks
// (dist/chunks/). Node then reads a few files at a command's start instead of 180 (zod alone is 95),
// which is most of what `redgreen validate` costs.
//
// One bundle for both entry points, so that a config file's `import … from 'redgreen'` (dist/api)
// and the CLI share one copy of each registry (registerRunner, registerBackend). The rest of
// dist/ stays as tsc wrote it: the type declarations, the bench, and the tests that load a module
// by its path. Those are separate copies, and none of them registers anything for the CLI.
import { build } from 'esbuild';
import { rm } from 'node:fs/promises';

/**
 * Bundled: zod and the small packages every command loads (commander, picomatch, p-limit). The rest
 * (dockerode, execa, tar-stream…) is loaded from node_modules, and only by the commands that use it.
 */
const BUNDLED = /^(zod|commander|picomatch|p-limit|yocto-queue)(\/|$)/;

await rm('dist/chunks', { recursive: true, force: true });
await build({
  entryPoints: { cli: 'dist/cli.js', 'cli-program': 'dist/cli-program.js', 'api/index': 'dist/api/index.js' },
  outdir: 'dist',
  allowOverwrite: true,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  chunkNames: 'chunks/[name]-[hash]',
  // Smaller to read and parse; names are kept, so stack traces still say where.
  minifyWhitespace: true,
  minifySyntax: true,
  // commander and picomatch are CommonJS: their require('node:events')… needs a require in an ES module.
  banner: { js: "import { createRequire as __rgCreateRequire } from 'node:module'; const require = __rgCreateRequire(import.meta.url);" },
  plugins: [
    {
      // zod's namespaces export all its 40 locales (300 KB to parse at every start); redgreen's
      // messages are English, so `locales` holds `en` only.
      name: 'zod-english-only',
      setup(b) {
        b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (a) =>
          /zod[\\/]v4[\\/](classic|core)[\\/]/.test(a.importer) ? { path: 'zod-locales', namespace: 'rg' } : undefined,
        );
        b.onLoad({ filter: /.*/, namespace: 'rg' }, () => ({
          contents: "export { default as en } from 'zod/v4/locales/en.js';",
          resolveDir: process.cwd(),
        }));
      },
    },
    {
      name: 'node-modules-external',
      setup(b) {
        b.onResolve({ filter: /^[^./]/ }, (a) => (BUNDLED.test(a.path) ? undefined : { path: a.path, external: true }));
      },
    },
  ],
  logLevel: 'warning',
});
