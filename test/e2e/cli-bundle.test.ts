import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, expect, test } from 'vitest';
import { codeCacheFile } from '../../harness/code-cache.js';
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

/** The code cache of a command run with XDG_CACHE_HOME at `cache`. */
const cacheFileIn = (cache: string) => codeCacheFile(path.join(cache, 'redgreen'));

function validateWithCache(cache: string): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, [path.join(REPO, 'dist/cli.js'), 'validate', 'bug01_decimal_div'], {
    cwd: REPO,
    encoding: 'utf8',
    env: { ...process.env, XDG_CACHE_HOME: cache },
  });
}

test('the CLI runs from one bundle (`npm run build`): zod and the other packages validate uses are inside it, and it is ASCII', () => {
  const loaded = modulesLoadedBy(['validate', 'bug01_decimal_div']);
  // The only ES module: the entry, which takes the program from the CommonJS bundle.
  expect(loaded).toEqual(['dist/cli.js']);
  const { packages, files } = packagesRequiredBy(['validate', 'bug01_decimal_div']);
  expect(files.filter((f) => f.startsWith(REPO)).map((f) => path.relative(REPO, f))).toEqual(['dist/redgreen.cjs']);
  expect([...packages]).toEqual([]);
  // V8 keeps an ASCII source as one byte a character; one other character makes all of it two
  // (reading and decoding the bundle then took 17 instead of 5 ms).
  const bundle = readFileSync(path.join(REPO, 'dist/redgreen.cjs'));
  expect(bundle.findIndex((b) => b > 0x7f)).toBe(-1);
  // zod's 40 locales (about 300 KB) are left out: redgreen speaks English only.
  expect(bundle.length).toBeLessThan(1_400_000);
});

test('the bundle is compiled once: the next command reads its code from the cache, and a cache that does not fit is made anew', () => {
  const cache = path.join(dir, 'cache-home');
  const first = validateWithCache(cache);
  expect(first.status).toBe(0);
  const file = cacheFileIn(cache);
  const made = readFileSync(file);
  const before = statSync(file, { bigint: true });
  // Accepted (by its header and by V8): left as it is.
  expect(validateWithCache(cache).status).toBe(0);
  expect(statSync(file, { bigint: true }).mtimeNs).toBe(before.mtimeNs);

  // One byte of the code changed (a disk's fault, a copy cut short): never run, made again.
  const broken = Buffer.from(made);
  broken.writeUInt8(broken.readUInt8(broken.length >> 1) ^ 0xff, broken.length >> 1);
  writeFileSync(file, broken);
  const again = validateWithCache(cache);
  expect(again).toMatchObject({ status: 0, stderr: '' });
  expect(again.stdout).toContain('1/1 fixtures valid');
  expect(readFileSync(file).equals(broken)).toBe(false);
  expect(readFileSync(file).readUInt32LE(0)).toBe(made.readUInt32LE(0));

  // A cache of another build of the bundle (its source's checksum differs): made again for this one.
  const other = Buffer.from(made);
  other.writeUInt32LE((made.readUInt32LE(0) ^ 1) >>> 0, 0);
  writeFileSync(file, other);
  expect(validateWithCache(cache).status).toBe(0);
  expect(readFileSync(file).readUInt32LE(0)).toBe(made.readUInt32LE(0));
});

test("a config file in TypeScript or JavaScript loads in the bundle, compiled or from its cache, and its registerRunner (through `import … from 'redgreen'`) fills the registry the CLI reads", () => {
  const api = JSON.stringify(path.join(REPO, 'dist/api/index.js'));
  const adapter =
    "{ runner: 'lines', infrastructure: [], prepare: (c) => ({ command: c.command, env: {} }), " +
    "parse: () => ({ source: 'none', tests: [], counts: { passed: 0, failed: 0, skipped: 0, errors: 0, total: 0 } }) }";
  for (const [name, typed] of [
    ['redgreen.config.ts', ': string'],
    ['redgreen.config.mjs', ''],
  ] as const) {
    const root = mkdtempSync(path.join(dir, 'config-'));
    writeFileSync(
      path.join(root, name),
      `import { defineConfig, registerRunner } from ${api};\nconst runner${typed} = 'lines';\nregisterRunner({ ...${adapter}, runner });\nexport default defineConfig({});\n`,
    );
    const cache = path.join(root, 'cache');
    for (const start of ['compiled', 'from the cache']) {
      const r = spawnSync(process.execPath, [path.join(REPO, 'dist/cli.js'), 'new', 'x', '--runner', 'lines'], {
        cwd: root,
        encoding: 'utf8',
        env: { ...process.env, XDG_CACHE_HOME: cache },
      });
      // The runner is known (registered by the config, read by the CLI); it only lacks an example to scaffold.
      expect({ name, start, status: r.status, stderr: r.stderr }).toMatchObject({
        status: 2,
        stderr: expect.stringContaining('"lines" is a runner registered with registerRunner() without an example'),
      });
    }
    expect(statSync(cacheFileIn(cache)).size).toBeGreaterThan(0);
  }
  // The bundle's only import() is the one every import of what lies outside it goes through (config/run-time-import.ts).
  expect(readFileSync(path.join(REPO, 'dist/redgreen.cjs'), 'utf8').match(/(?<![\w$.])import\(/g)).toHaveLength(1);
});

test('a cache folder that cannot be written costs the command nothing but the compile', () => {
  const notAFolder = path.join(dir, 'cache-is-a-file');
  writeFileSync(notAFolder, '');
  const r = validateWithCache(notAFolder);
  expect(r).toMatchObject({ status: 0, stderr: '' });
  expect(r.stdout).toContain('1/1 fixtures valid');
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
): { stderr: string; packages: Set<string>; builtins: Set<string>; files: string[] } {
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
  return { stderr: r.stderr, packages, builtins, files };
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
