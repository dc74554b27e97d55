/**
 * TEST DOUBLE of E2B (see README.md): envd's file endpoints — the `/files` REST upload (raw
 * octet-stream, optionally gzip, or multipart/form-data with one part per file) and download, and
 * the `filesystem.Filesystem` Connect calls the SDK's `files` module makes.
 */
import { createReadStream } from 'node:fs';
import { lstat, mkdir, readdir, readlink, rename, rm, stat, writeFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import { Readable } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import { ConnectFailure, readBody, sendUnary } from './connect.js';
import type { EnvdContext } from './envd-process.js';

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

async function writeOne(ctx: EnvdContext, p: string, data: Buffer): Promise<{ name: string; type: 'file'; path: string }> {
  const abs = ctx.resolve(p);
  await mkdir(path.dirname(abs), { recursive: true });
  await writeFile(abs, data);
  return { name: path.basename(abs), type: 'file', path: abs };
}

export async function filesRest(req: IncomingMessage, res: ServerResponse, ctx: EnvdContext, query: URLSearchParams): Promise<void> {
  const p = query.get('path');
  if (req.method === 'GET') {
    if (!p) return sendJson(res, 400, { code: 400, message: 'path is required' });
    const abs = ctx.resolve(p);
    const st = await stat(abs).catch(() => null);
    if (!st) return sendJson(res, 404, { code: 404, message: `path '${p}' does not exist` });
    if (st.isDirectory()) return sendJson(res, 400, { code: 400, message: `path '${p}' is a directory` });
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': st.size });
    createReadStream(abs).pipe(res);
    return;
  }
  if (req.method !== 'POST') return sendJson(res, 405, { code: 405, message: 'method not allowed' });
  const type = String(req.headers['content-type'] ?? '');
  if (type.startsWith('multipart/form-data')) {
    const form = await new Response(Readable.toWeb(req) as ReadableStream, { headers: { 'content-type': type } }).formData();
    const written = [];
    for (const part of form.getAll('file')) {
      if (typeof part === 'string') continue;
      written.push(await writeOne(ctx, p ?? part.name, Buffer.from(await part.arrayBuffer())));
    }
    return sendJson(res, 200, written);
  }
  if (!p) return sendJson(res, 400, { code: 400, message: 'path is required for an octet-stream upload' });
  let data = await readBody(req);
  if (req.headers['content-encoding'] === 'gzip') data = gunzipSync(data);
  return sendJson(res, 200, [await writeOne(ctx, p, data)]);
}

async function entryInfo(abs: string): Promise<Record<string, unknown>> {
  const st = await lstat(abs).catch(() => null);
  if (!st) throw new ConnectFailure('not_found', `path '${abs}' does not exist`);
  const type = st.isSymbolicLink() ? 'FILE_TYPE_SYMLINK' : st.isDirectory() ? 'FILE_TYPE_DIRECTORY' : 'FILE_TYPE_FILE';
  const perms = (st.mode & 0o777).toString(8).padStart(3, '0');
  return {
    name: path.basename(abs),
    type,
    path: abs,
    size: String(st.size),
    mode: st.mode & 0o7777,
    permissions: `${st.isDirectory() ? 'd' : '-'}${[...perms].map((d) => ['---', '--x', '-w-', '-wx', 'r--', 'r-x', 'rw-', 'rwx'][Number(d)]).join('')}`,
    owner: String(st.uid),
    group: String(st.gid),
    modifiedTime: st.mtime.toISOString(),
    ...(st.isSymbolicLink() ? { symlinkTarget: await readlink(abs) } : {}),
  };
}

export async function filesystemService(method: string, req: IncomingMessage, res: ServerResponse, ctx: EnvdContext): Promise<void> {
  const r = JSON.parse((await readBody(req)).toString('utf8') || '{}') as {
    path?: string;
    depth?: number;
    source?: string;
    destination?: string;
  };
  switch (method) {
    case 'Stat':
      return sendUnary(res, { entry: await entryInfo(ctx.resolve(r.path ?? '')) });
    case 'ListDir': {
      const root = ctx.resolve(r.path ?? '');
      if (!(await stat(root).catch(() => null))?.isDirectory())
        throw new ConnectFailure('not_found', `directory '${r.path}' does not exist`);
      const entries: Record<string, unknown>[] = [];
      const walk = async (dir: string, depth: number) => {
        for (const name of (await readdir(dir)).sort()) {
          const abs = path.join(dir, name);
          const info = await entryInfo(abs);
          entries.push(info);
          if (depth > 1 && info.type === 'FILE_TYPE_DIRECTORY') await walk(abs, depth - 1);
        }
      };
      await walk(root, Math.max(1, r.depth ?? 1));
      return sendUnary(res, { entries });
    }
    case 'MakeDir': {
      const abs = ctx.resolve(r.path ?? '');
      if (await lstat(abs).catch(() => null)) throw new ConnectFailure('already_exists', `path '${r.path}' already exists`);
      await mkdir(abs, { recursive: true });
      return sendUnary(res, { entry: await entryInfo(abs) });
    }
    case 'Remove':
      await rm(ctx.resolve(r.path ?? ''), { recursive: true, force: true });
      return sendUnary(res, {});
    case 'Move': {
      const to = ctx.resolve(r.destination ?? '');
      await entryInfo(ctx.resolve(r.source ?? ''));
      await mkdir(path.dirname(to), { recursive: true });
      await rename(ctx.resolve(r.source ?? ''), to);
      return sendUnary(res, { entry: await entryInfo(to) });
    }
    default:
      throw new ConnectFailure('unknown', `filesystem.Filesystem/${method} is not implemented by the test double`);
  }
}
