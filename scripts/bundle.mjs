// After tsc: the CLI and the public API as one esbuild bundle over dist/, sharing chunks
// (dist/chunks/). Node then reads a few files at a command's start instead of 180 (zod alone is 95),
// which is most of what `redgreen validate` costs. The other packages stay in node_modules.
//
// One bundle for both entry points, so that a config file's `import … from 'redgreen'` (dist/api)
// and the CLI share one copy of each registry (registerRunner, registerBackend). The rest of
// dist/ stays as tsc wrote it: the type declarations, the bench, and the tests that load a module
// by its path. Those are separate copies, and none of them registers anything for the CLI.
import { build } from 'esbuild';
import { rm } from 'node:fs/promises';

/** Bundled: zod. Everything else is imported from node_modules, as without the bundle. */
const BUNDLED = /^zod(\/|$)/;

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
  plugins: [
    {
      name: 'node-modules-external',
      setup(b) {
        b.onResolve({ filter: /^[^./]/ }, (a) => (BUNDLED.test(a.path) ? undefined : { path: a.path, external: true }));
      },
    },
  ],
  logLevel: 'warning',
});
