import {
  closeSync,
  constants as fsc,
  fchmodSync,
  fstatSync,
  ftruncateSync,
  lstatSync,
  openSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';

/** This process's umask, read once (reading it sets it twice). */
export const UMASK = process.umask();

/**
 * Makes `content` the whole of `file` (created when missing, never through a symlink), written in
 * place and then cut to its length, never truncated first: on ext4, a file truncated to nothing
 * and written again is flushed to disk at its close (auto_da_alloc, which protects programs that
 * replace files that way), about 170 µs a file instead of 10. It is cut only when it was longer,
 * and `mode` (when given) set only when it differs (or holds setuid, setgid or sticky, which a
 * write may clear): on ext4 each costs more than the write.
 */
export function rewriteSync(
  file: string,
  content: string | Buffer,
  mode?: number,
  /** The file's size and mode as the caller just saw them (its own lstat of that inode): no fstat then. */
  known?: { size: number; mode: number },
): void {
  const data = typeof content === 'string' ? Buffer.from(content) : content;
  const fd = openSync(file, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_NOFOLLOW, mode ?? 0o666);
  try {
    const before = known ?? fstatSync(fd);
    writeAll(fd, data);
    if (before.size > data.length) ftruncateSync(fd, data.length);
    if (mode !== undefined && (mode & 0o7000 || (before.mode & 0o7777) !== mode)) fchmodSync(fd, mode);
  } finally {
    closeSync(fd);
  }
}

/**
 * Writes a file expected not to be there yet (an upload into an emptied workspace): created with
 * its mode, with nothing to cut and no chmod unless the umask took bits of it. A file that is
 * there already is rewritten (rewriteSync); a symlink is never followed.
 */
export function writeNewSync(file: string, data: Buffer, mode: number): void {
  let fd: number;
  try {
    fd = openSync(file, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_EXCL | fsc.O_NOFOLLOW, mode);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return rewriteSync(file, data, mode);
    throw e;
  }
  try {
    writeAll(fd, data);
    if (mode & UMASK) fchmodSync(fd, mode);
  } finally {
    closeSync(fd);
  }
}

/**
 * Writes a file expected not to be there yet into a spare inode (host/roots.ts Spares): the spare
 * is renamed into place (never following a symlink there: a rename replaces the entry itself) and
 * rewritten whole, its bytes, length and mode; what is left of it is only its inode number. False,
 * with the spare removed, when it is no longer a plain file with one link (something of the
 * sandbox before changed it): the caller writes a new file.
 */
export function reuseSync(spare: string, file: string, data: Buffer, mode: number): boolean {
  const st = lstatSync(spare, { throwIfNoEntry: false });
  if (!st?.isFile() || st.nlink !== 1) {
    rmSync(spare, { recursive: true, force: true });
    return false;
  }
  renameSync(spare, file);
  // The inode the lstat saw, moved by the rename: its size and mode are known.
  rewriteSync(file, data, mode, st);
  return true;
}

function writeAll(fd: number, data: Buffer): void {
  for (let at = 0; at < data.length;) at += writeSync(fd, data, at, data.length - at, at);
}
