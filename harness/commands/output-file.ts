import { lstat, writeFile } from 'node:fs/promises';
import { writeAtomic } from '../transcripts/writer.js';

/**
 * Writes a report where the user pointed (`--out`, `--reporter junit=<file>`): atomically (a temp
 * file renamed over it) when it is a regular file or new, and in place when it is anything else —
 * a symlink, a device, a pipe (`/dev/stdout`, `/dev/null`): renaming over those would replace the
 * link, or the machine's own special file, with a regular file.
 */
export async function writeOutput(file: string, text: string): Promise<void> {
  const st = await lstat(file).catch(() => null);
  if (st && !st.isFile()) await writeFile(file, text);
  else await writeAtomic(file, text);
}
