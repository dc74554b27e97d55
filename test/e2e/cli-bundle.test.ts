import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, expect, test } from 'vitest';
import { REPO } from '../helpers/cli.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'rg-bundle-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A resolve hook that notes every module Node's loader resolves, in the file its process names. */
const register = path.join(dir, 'register.mjs');
writeFileSync(
  path.join(dir, 'hook.mjs'),
  `import { appendFileSync } from 'node:fs';
export async function resolve(s, c, next) { const r = await next(s, c); appendFileSync(process.env.RG_LOADED_LOG, r.url + '\\n'); return r; }`,
);
writeFileSync(
  register,
  `import { register } from 'node:module'; register(${JSON.stringify(pathToFileURL(path.join(dir, 'hook.mjs')).href)});`,
);

/** The modules a command loads (`cli`: a redgreen command; else node's own arguments). */
function modulesLoadedBy(args: string[], cli = true): string[] {
  const log = path.join(dir, `loaded-${args.join('-').replace(/\W+/g, '_')}.txt`);
  execFileSync(process.execPath, ['--import', register, ...(cli ? [path.join(REPO, 'dist/cli.js')] : []), ...args], {
    cwd: REPO,
    stdio: 'ignore',
    env: { ...process.env, RG_LOADED_LOG: log },
  });
  return [...new Set(readFileSync(log, 'utf8').trim().split('\n'))]
    .filter((u) => u.startsWith('file:'))
    .map((u) => path.relative(REPO, new URL(u).pathname));
}

test("the CLI runs from its bundle (`npm run build`): zod and redgreen's own modules are read from a few chunks, not file by file", () => {
  const loaded = modulesLoadedBy(['validate', 'bug01_decimal_div']);
  expect(loaded).toContain('dist/cli.js');
  // zod, commander, picomatch and p-limit are inside the bundle; validate uses no other package.
  expect(loaded.filter((f) => f.startsWith('node_modules/'))).toEqual([]);
  // Of dist/, only the entries and their chunks: tsc's module tree is for the type declarations, the bench and tests.
  expect(loaded.filter((f) => f.startsWith('dist/') && !/^dist\/(cli|cli-program)\.js$|^dist\/chunks\//.test(f))).toEqual([]);
  expect(loaded.length).toBeLessThan(60);
  // zod's 40 locales (about 300 KB) are left out: redgreen speaks English only.
  const bytes = loaded.reduce((sum, f) => sum + statSync(path.join(REPO, f)).size, 0);
  expect(bytes).toBeLessThan(700_000);
});

test("the public API shares the CLI's chunks: a config file's registerRunner (through `import … from 'redgreen'`) fills the registry the CLI reads", () => {
  const registry = readdirSync(path.join(REPO, 'dist/chunks'))
    .map((f) => `dist/chunks/${f}`)
    .filter((f) => /function registerRunner\(/.test(readFileSync(path.join(REPO, f), 'utf8')));
  expect(registry).toHaveLength(1);
  const api = modulesLoadedBy(
    ['--input-type=module', '-e', `await import(${JSON.stringify(path.join(REPO, 'dist/api/index.js'))})`],
    false,
  );
  expect(api).toContain(registry[0]);
  expect(modulesLoadedBy(['validate', 'bug01_decimal_div'])).toContain(registry[0]);
  expect(modulesLoadedBy(['--version']).filter((f) => !f.startsWith('dist/chunks/'))).toEqual(['dist/cli.js']);
});

/** A preload that writes, at its process's exit, every CommonJS file loaded (the Docker client's packages are CommonJS). */
const requiredLog = path.join(dir, 'required.mjs');
writeFileSync(
  requiredLog,
  `import { createRequire } from 'node:module'; import { writeFileSync } from 'node:fs';
const Module = createRequire(import.meta.url)('node:module');
process.on('exit', () => {
  writeFileSync(process.env.RG_REQUIRED_LOG, Object.keys(Module._cache).join('\\n'));
  writeFileSync(process.env.RG_REQUIRED_LOG + '.builtins', process.moduleLoadList.join('\\n'));
});`,
);

/** A redgreen command's stderr, the packages it required from node_modules and the Node modules it loaded. */
function packagesRequiredBy(
  args: string[],
  env: Record<string, string> = {},
): { stderr: string; packages: Set<string>; builtins: Set<string> } {
  const log = path.join(dir, `required-${Math.random().toString(36).slice(2)}.txt`);
  const r = spawnSync(process.execPath, ['--import', requiredLog, path.join(REPO, 'dist/cli.js'), ...args], {
    cwd: REPO,
    encoding: 'utf8',
    env: { ...process.env, ...env, RG_REQUIRED_LOG: log },
  });
  const files = readFileSync(log, 'utf8').split('\n');
  const packages = new Set(files.flatMap((f) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(f)?.[1] ?? []));
  const builtins = new Set(
    readFileSync(`${log}.builtins`, 'utf8')
      .split('\n')
      .flatMap((m) => /^NativeModule (.+)$/.exec(m)?.[1] ?? []),
  );
  return { stderr: r.stderr, packages, builtins };
}

test('the Docker client starts without its BuildKit (gRPC, protobuf), SSH and build-context packages, and loads one when it is used', () => {
  const unix = packagesRequiredBy(['selfcheck', '--backend', 'docker', 'bug02_off_by_one'], {
    DOCKER_HOST: `unix://${path.join(dir, 'no-engine.sock')}`,
  });
  expect(unix.stderr).toContain('is not reachable');
  // The client itself ran (docker-modem's own dependencies are there), without the others.
  expect(unix.packages).toContain('debug');
  for (const p of ['@grpc/grpc-js', '@grpc/proto-loader', 'protobufjs', 'ssh2', 'tar-fs', 'uuid']) expect(unix.packages).not.toContain(p);
  const ssh = packagesRequiredBy(['selfcheck', '--backend', 'docker', 'bug02_off_by_one'], { DOCKER_HOST: 'ssh://root@127.0.0.1:1' });
  expect(ssh.stderr).toContain('is not reachable: connect ECONNREFUSED 127.0.0.1:1');
  expect(ssh.packages).toContain('ssh2');
});

test('validate loads neither child_process (commander’s is a stand-in) nor crypto (sha256 loads it when first called)', () => {
  const { builtins } = packagesRequiredBy(['validate', 'bug01_decimal_div']);
  expect(builtins).toContain('fs');
  for (const m of ['child_process', 'crypto']) expect(builtins).not.toContain(m);
});
