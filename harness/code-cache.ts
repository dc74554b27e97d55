// The CLI's bundle loaded with a V8 code cache. Node 20 keeps no compiled code between runs for
// ES modules (Node 22's module.enableCompileCache is not there), so every command parsed and
// compiled its ~0.5 MB of JavaScript afresh (about 45 of the ~230 ms `redgreen validate` took in a
// CPU profile). A CommonJS file compiled through vm.Script can be given the code V8 made for it
// last time instead.
import { closeSync, fstatSync, futimesSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { readdir, rm, stat } from 'node:fs/promises';
import Module, { createRequire } from 'node:module';
import path from 'node:path';
import { Script } from 'node:vm';
import { crc32 } from 'node:zlib';
import { userCacheDir } from './config/paths.js';

/** Where the code for this Node (its V8) and this machine's architecture is kept: one file, rewritten as the bundle changes. */
export const codeCacheFile = (cacheDir = userCacheDir()) =>
  path.join(cacheDir, 'code', `cli-node${process.versions.node}-${process.arch}.v8`);

export interface CodeCacheListing {
  name: string;
  file: string;
  bytes: number;
  /** Its modification time: when it was written, or the last start that found it a day old (readCache). */
  lastUsed: Date;
}

/**
 * The code caches under a cache folder, oldest first: one per Node version that ran the CLI (kept
 * after that Node is gone), and what a process killed while writing left (`.tmp`). For `cache
 * list`/`cache prune`; a removed one is made again by the next command that needs it.
 */
export async function listCodeCaches(cacheDir: string): Promise<CodeCacheListing[]> {
  const dir = path.join(cacheDir, 'code');
  const out: CodeCacheListing[] = [];
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    const file = path.join(dir, name);
    const st = await stat(file).catch(() => null);
    if (st?.isFile()) out.push({ name, file, bytes: st.size, lastUsed: st.mtime });
  }
  return out.sort((a, b) => a.lastUsed.getTime() - b.lastUsed.getTime() || a.name.localeCompare(b.name));
}

export const removeCodeCache = (entry: CodeCacheListing) => rm(entry.file, { force: true });

/**
 * The file's header: the source's CRC-32, then the code's. V8 checks that cached code was made by
 * the same V8 with the same flags, but for the source it checks only its length, and a file cut
 * short or changed on disk must never run as code: either mismatch means the code is made anew.
 */
const HEADER = 8;

/**
 * CommonJS's own wrapper (Module.wrap), and one more name: the import() the bundle's code calls
 * (config/run-time-import.ts). Code V8 runs from a cache has no loader for an import() of its own
 * in Node 20, so the caller, an ES module, lends its own.
 */
const WRAPPER = '(function (exports, require, module, __filename, __dirname, __rgRunTimeImport) { ';

/**
 * `file` (a CommonJS module) as `require` would give it, and put where `require` and `import` of it
 * find it, so both share this one instance (the API's registries). Its code comes from the cache
 * when the cache is for this source; otherwise V8 compiles it, and the code made for the module's
 * start is written for the next one. Only the start's: then the cache is the same whichever
 * command ran first (the code a whole run compiled was half as large again, and every later start
 * would read it), and each command compiles its own functions as it runs them.
 * The cache is only ever a shortcut: a folder that cannot be written, or a file that cannot be
 * read, costs the compile, never the command.
 */
export function requireWithCodeCache(
  file: string,
  runTimeImport: (specifier: string) => Promise<unknown>,
  cacheFile = codeCacheFile(),
): unknown {
  const bytes = readFileSync(file);
  const sourceCrc = crc32(bytes);
  const source = bytes.toString('utf8');
  const cached = readCache(cacheFile, sourceCrc);
  const script = new Script(`${WRAPPER}${source}\n})`, { filename: file, ...(cached ? { cachedData: cached } : {}) });

  const mod = new Module(file);
  mod.filename = file;
  mod.paths = (Module as unknown as { _nodeModulePaths(dir: string): string[] })._nodeModulePaths(path.dirname(file));
  (Module as unknown as { _cache: Record<string, Module> })._cache[file] = mod;
  const wrapper = script.runInThisContext() as (...args: unknown[]) => void;
  wrapper.call(mod.exports, mod.exports, createRequire(file), mod, file, path.dirname(file), runTimeImport);
  mod.loaded = true;
  if (!cached || script.cachedDataRejected) writeCache(cacheFile, sourceCrc, script);
  return mod.exports;
}

function readCache(cacheFile: string, sourceCrc: number): Buffer | undefined {
  let data: Buffer;
  let fd: number;
  try {
    fd = openSync(cacheFile, 'r');
  } catch {
    return undefined;
  }
  try {
    data = readFileSync(fd);
    stamp(fd, fstatSync(fd).mtimeMs);
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
  if (data.length <= HEADER || data.readUInt32LE(0) !== sourceCrc) return undefined;
  const code = data.subarray(HEADER);
  return data.readUInt32LE(4) === crc32(code) ? code : undefined;
}

/** A day: how stale a code cache's "last used" (its modification time) may be. */
const STAMP_MS = 86_400_000;

/**
 * Moves a cache read now to the end of `cache prune`'s order (oldest first, by modification time),
 * at most once a day, so that `--older-than` never removes what every start reads. A cache that
 * cannot be stamped (a read-only folder) is still used.
 */
function stamp(fd: number, mtimeMs: number): void {
  if (Date.now() - mtimeMs < STAMP_MS) return;
  try {
    const now = new Date();
    futimesSync(fd, now, now);
  } catch {
    // not ours to change: read as it is
  }
}

/**
 * Written whole under a name of its own, then renamed: a run beside this one reads the old file or
 * the new, never half of one. The file is opened before the code is made, so a folder that cannot
 * be written costs no more than the attempt.
 */
function writeCache(cacheFile: string, sourceCrc: number, script: Script): void {
  const tmp = `${cacheFile}.${process.pid}.tmp`;
  let fd: number | undefined;
  try {
    mkdirSync(path.dirname(cacheFile), { recursive: true });
    fd = openSync(tmp, 'w');
    const code = script.createCachedData();
    const header = Buffer.alloc(HEADER);
    header.writeUInt32LE(sourceCrc, 0);
    header.writeUInt32LE(crc32(code), 4);
    writeFileSync(fd, Buffer.concat([header, code]));
    closeSync(fd);
    fd = undefined;
    renameSync(tmp, cacheFile);
  } catch {
    try {
      if (fd !== undefined) closeSync(fd);
      rmSync(tmp, { force: true });
    } catch {
      // nothing could be written there either
    }
  }
}
