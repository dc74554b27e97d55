// After tsc: the CLI and the public API as one CommonJS bundle over dist/ (dist/redgreen.cjs).
// Node then reads one file at a command's start instead of 180 (zod alone is 95), and the CLI
// (dist/cli.js, a small ES module) loads it through a V8 code cache (harness/code-cache.ts): Node 20
// keeps no compiled code between runs for ES modules, and parsing and compiling was about 45 of the
// ~230 ms `redgreen validate` took.
//
// One bundle for both, so that a config file's `import … from 'redgreen'` (dist/api/index.js, a
// facade over the bundle) and the CLI share one copy of each registry (registerRunner,
// registerBackend). The rest of dist/ stays as tsc wrote it: the type declarations, the bench, and
// the tests that load a module by its path. Those are separate copies, and none of them registers
// anything for the CLI.
import { build } from 'esbuild';
import { rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';

/**
 * Bundled: zod and the small packages every command loads (commander, picomatch, p-limit), and the
 * Docker client (dockerode, docker-modem), whose own start is trimmed (LAZY). The rest (execa,
 * tar-stream…) is loaded from node_modules, and only by the commands that use it.
 */
const BUNDLED = /^(zod|commander|picomatch|p-limit|yocto-queue|dockerode|docker-modem)(\/|$)/;

/**
 * What bundled packages require at their start but use only for what redgreen never asks of them:
 * the Docker client's BuildKit sessions and status (gRPC and protobuf, about 140 files, and .proto
 * files read next to them), SSH hosts (ssh2) and build contexts (tar-fs); commander's executable
 * subcommands (child_process, which brings net, dgram and streams: every command would load it).
 * Each becomes a stand-in that loads the real module when first called or read. Keyed by the
 * package file that requires it, then by what it requires; a module of dockerode's is named as
 * its main file (lib/docker.js) would require it, and loaded from the installed dockerode.
 */
const LAZY = {
  'dockerode/lib/docker.js': { './session': './session.js', './buildkit': './buildkit.js' },
  'dockerode/lib/util.js': { 'tar-fs': 'tar-fs' },
  'docker-modem/lib/modem.js': { './ssh': 'docker-modem/lib/ssh.js' },
  'commander/lib/command.js': { 'node:child_process': 'node:child_process' },
};

/** A module that is the module `spec` once touched: called, constructed, or a property read. */
const lazyModule = (spec) => `let real;
const load = () => (real ??= ${
  spec.startsWith('node:')
    ? `require(${JSON.stringify(spec)})`
    : `require('node:module').createRequire(require.resolve('dockerode'))(${JSON.stringify(spec)})`
});
module.exports = new Proxy(function () {}, {
  apply: (_, self, args) => Reflect.apply(load(), self, args),
  construct: (_, args) => Reflect.construct(load(), args),
  get: (_, key) => load()[key],
  has: (_, key) => key in load(),
});
`;

/** Both builds: Node 20; smaller to read and parse, names kept, so stack traces still say where. */
const COMMON = { bundle: true, platform: 'node', target: 'node20', minifyWhitespace: true, minifySyntax: true };

// An older build's ES chunks.
await rm('dist/chunks', { recursive: true, force: true });
await build({
  // The module a command's code starts from, and everything the API exports.
  stdin: {
    contents: "export * from './dist/api/index.js'; export { main } from './dist/cli-program.js';",
    resolveDir: process.cwd(),
    sourcefile: 'redgreen-entry.js',
  },
  outfile: 'dist/redgreen.cjs',
  ...COMMON,
  format: 'cjs',
  // The modules ask for their own file's URL (the package's root, a require of their own).
  define: { 'import.meta.url': '__rgModuleUrl' },
  banner: { js: "const __rgModuleUrl = require('node:url').pathToFileURL(__filename).href;" },
  plugins: [
    {
      // The bundle's import() of what is outside it (harness/config/run-time-import.ts): the one
      // the CLI's entry lends it (harness/code-cache.ts), else, loaded by Node's own require (the
      // API), its own.
      name: 'run-time-import',
      setup(b) {
        b.onLoad({ filter: /[\\/]dist[\\/]config[\\/]run-time-import\.js$/ }, () => ({
          contents:
            "export const runTimeImport = typeof __rgRunTimeImport === 'function' ? __rgRunTimeImport : (specifier) => import(specifier);",
          loader: 'js',
        }));
      },
    },
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
      name: 'docker-client-lazy',
      setup(b) {
        b.onResolve({ filter: /^(\.\/|tar-fs$|node:child_process$)/ }, (a) => {
          const importer = a.importer
            .split(/[\\/]node_modules[\\/]/)
            .at(-1)
            ?.replaceAll('\\', '/');
          const spec = LAZY[importer]?.[a.path];
          return spec ? { path: spec, namespace: 'rg-lazy' } : undefined;
        });
        b.onLoad({ filter: /.*/, namespace: 'rg-lazy' }, (a) => ({ contents: lazyModule(a.path), loader: 'js' }));
        // The stand-in's own requires (node:module): left to Node.
        b.onResolve({ filter: /.*/, namespace: 'rg-lazy' }, (a) => ({ path: a.path, external: true }));
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

// The CLI's entry: cli.ts, with the program taken from the bundle through the code cache (cli-bundle.ts).
await build({
  entryPoints: ['dist/cli.js'],
  outfile: 'dist/cli.js',
  allowOverwrite: true,
  ...COMMON,
  format: 'esm',
  plugins: [
    {
      name: 'program-from-bundle',
      setup(b) {
        b.onResolve({ filter: /^\.\/cli-program\.js$/ }, (a) => ({ path: path.resolve(a.resolveDir, 'cli-bundle.js') }));
      },
    },
  ],
  logLevel: 'warning',
});

// The API for `import` and `require`: the bundle's exports (not the CLI's main), from the one instance.
const names = Object.keys(createRequire(import.meta.url)('../dist/redgreen.cjs')).filter((n) => n !== 'main');
await writeFile(
  'dist/api/index.js',
  `// redgreen's API: the exports of the bundle the CLI runs (dist/redgreen.cjs), so both share its registries.
import { createRequire } from 'node:module';
const api = createRequire(import.meta.url)('../redgreen.cjs');
export const { ${names.join(', ')} } = api;
`,
);
