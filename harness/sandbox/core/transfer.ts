import { createReadStream } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { buffer } from 'node:stream/consumers';
import type { Sandbox } from './types.js';

/**
 * Big files between the host and a sandbox: streamed by a backend that can, else through memory
 * (readFile/writeFiles) by one that cannot yet. Callers never hold such a file whole themselves.
 */
export async function downloadFile(sb: Sandbox, path: string, hostFile: string): Promise<void> {
  if (sb.downloadFile) return sb.downloadFile(path, hostFile);
  await writeFile(hostFile, await sb.readFile(path));
}

export async function uploadFile(
  sb: Sandbox,
  hostFile: string,
  path: string,
  options: { start?: number; mode?: number } = {},
): Promise<void> {
  if (sb.uploadFile) return sb.uploadFile(hostFile, path, options);
  const content = options.start ? await buffer(createReadStream(hostFile, { start: options.start })) : await readFile(hostFile);
  await sb.writeFiles([{ path, content, ...(options.mode !== undefined ? { mode: options.mode } : {}) }]);
}
