import { closeSync, constants as fsc, fchmodSync, ftruncateSync, openSync, writeSync } from 'node:fs';

/**
 * Makes `content` the whole of `file` (created when missing, never through a symlink), written in
 * place and then cut to its length, never truncated first: on ext4, a file truncated to nothing
 * and written again is flushed to disk at its close (auto_da_alloc, which protects programs that
 * replace files that way), about 170 µs a file instead of 10. `mode` is set when given.
 */
export function rewriteSync(file: string, content: string | Buffer, mode?: number): void {
  const data = typeof content === 'string' ? Buffer.from(content) : content;
  const fd = openSync(file, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_NOFOLLOW, mode ?? 0o666);
  try {
    for (let at = 0; at < data.length;) at += writeSync(fd, data, at, data.length - at, at);
    ftruncateSync(fd, data.length);
    if (mode !== undefined) fchmodSync(fd, mode);
  } finally {
    closeSync(fd);
  }
}
