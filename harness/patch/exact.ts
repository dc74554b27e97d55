import { lstatSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { UMASK } from '../sandbox/core/rewrite.js';
import type { FileChange, ParsedPatch } from './parse.js';

/** A file as a patch leaves it: its bytes and mode, or null when the patch deletes it. */
export type PatchedFile = { content: Buffer; mode: number } | null;

interface Hunk {
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  /** Lines with their end ("\n", or none before "\ No newline at end of file"), as bytes. */
  before: string[];
  after: string[];
  /** Context lines after the last change: none means the hunk must end at the end of the file. */
  trailing: number;
}

const HUNK_HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

/** git writes every file it touches anew: 0777 or 0666 (executable or not), less the umask it inherits. */
const written = (executable: boolean) => (executable ? 0o777 : 0o666) & ~UMASK;

/**
 * Applies a plain text patch in memory, exactly where its hunks say, or declines (null) so that
 * git applies it: whatever this accepts, `git apply` would apply the same way, because git
 * tries the stated position first and this takes nothing else. Declined: binary sections,
 * renames and copies, symlinks, a path named twice, a header that disagrees with its hunk, a
 * hunk whose lines are not at their place, anything unusual. Paths in `skip` (the fixture's
 * metadata, which the tree git sees lacks) are declined too.
 */
export function applyExactly(
  text: string,
  parsed: ParsedPatch,
  fixtureDir: string,
  skip: readonly string[],
  /** Files' bytes as the caller read them from `fixtureDir` (a ReadTree's), by relative path: not read again. */
  contents?: ReadonlyMap<string, Buffer>,
): Map<string, PatchedFile> | null {
  // Patch lines are bytes: latin1 keeps each byte as one char (CRLF and invalid UTF-8 included).
  const lines = Buffer.from(text, 'utf8').toString('latin1').split('\n');
  const out = new Map<string, PatchedFile>();
  for (const f of parsed.files) {
    if (f.binary || f.kind === 'rename' || f.kind === 'copy' || f.newMode === '120000' || f.oldMode === '120000') return null;
    const p = f.kind === 'delete' ? f.oldPath : f.newPath;
    if (p === null || out.has(p) || skip.includes(p) || (f.oldPath !== null && f.oldPath !== p)) return null;
    const hunks = readHunks(lines, f);
    if (!hunks) return null;
    const result = applyFile(f, hunks, path.join(fixtureDir, p), contents?.get(p));
    if (result === undefined) return null;
    out.set(p, result);
  }
  return out;
}

function readHunks(lines: string[], f: FileChange): Hunk[] | null {
  const hunks: Hunk[] = [];
  let i = f.lines[0];
  const end = f.lines[1];
  while (i < end && !lines[i]!.startsWith('@@ ')) i++;
  while (i < end) {
    const m = HUNK_HEADER.exec(lines[i]!);
    if (!m) return lines.slice(i, end).every((l) => l === '' || l === '\r') ? hunks : null;
    const h: Hunk = {
      oldStart: Number(m[1]),
      oldLines: m[2] === undefined ? 1 : Number(m[2]),
      newStart: Number(m[3]),
      newLines: m[4] === undefined ? 1 : Number(m[4]),
      before: [],
      after: [],
      trailing: 0,
    };
    i++;
    let last: 'before' | 'after' | 'both' | null = null;
    while (i < end && (h.before.length < h.oldLines || h.after.length < h.newLines || lines[i]!.startsWith('\\'))) {
      const l = lines[i]!;
      const body = `${l.slice(1)}\n`;
      if (l.startsWith(' ')) {
        h.before.push(body);
        h.after.push(body);
        h.trailing++;
        last = 'both';
      } else if (l.startsWith('-')) {
        h.before.push(body);
        h.trailing = 0;
        last = 'before';
      } else if (l.startsWith('+')) {
        h.after.push(body);
        h.trailing = 0;
        last = 'after';
      } else if (l.startsWith('\\') && last) {
        // "\ No newline at end of file": the line before it has no end.
        if (last !== 'after') h.before[h.before.length - 1] = h.before.at(-1)!.slice(0, -1);
        if (last !== 'before') h.after[h.after.length - 1] = h.after.at(-1)!.slice(0, -1);
        last = null;
      } else return null; // an empty line, a stray line: let git judge it
      i++;
    }
    if (h.before.length !== h.oldLines || h.after.length !== h.newLines) return null;
    hunks.push(h);
  }
  return hunks;
}

/** The file after its hunks, undefined when it cannot be done exactly (git will say why). */
function applyFile(f: FileChange, hunks: Hunk[], file: string, bytes: Buffer | undefined): PatchedFile | undefined {
  let st;
  try {
    st = lstatSync(file, { throwIfNoEntry: false });
  } catch {
    return undefined; // a file where a folder is expected (ENOTDIR), unreadable: git says how
  }
  const newExec = f.newMode === undefined ? undefined : executable(f.newMode);
  const oldExec = f.oldMode === undefined ? undefined : executable(f.oldMode);
  if (newExec === null || oldExec === null) return undefined;
  if (f.kind === 'add') {
    if (st || hunks.length > 1 || (hunks[0] && (hunks[0].oldStart !== 0 || hunks[0].oldLines !== 0))) return undefined;
    return { content: Buffer.from(hunks[0]?.after.join('') ?? '', 'latin1'), mode: written(newExec ?? false) };
  }
  if (!st?.isFile()) return undefined;
  const isExec = (st.mode & 0o100) !== 0;
  // git only warns when the file's mode is not the one the patch expects: let it.
  if (oldExec !== undefined && oldExec !== isExec) return undefined;
  const image = splitLines((bytes ?? readFileSync(file)).toString('latin1'));
  let delta = 0;
  for (const h of hunks) {
    // Where the preimage must start now (earlier hunks applied), and where the hunk says it lands.
    const at = h.oldLines === 0 ? h.oldStart + delta : h.oldStart - 1 + delta;
    if ((h.newLines === 0 ? h.newStart : h.newStart - 1) !== at) return undefined;
    if (at < 0 || at + h.before.length > image.length) return undefined;
    for (let k = 0; k < h.before.length; k++) if (image[at + k] !== h.before[k]) return undefined;
    // git: a hunk with no context after its last change must end at the end of the file.
    if (h.trailing === 0 && at + h.before.length !== image.length) return undefined;
    image.splice(at, h.before.length, ...h.after);
    delta += h.after.length - h.before.length;
  }
  if (f.kind === 'delete') return image.length === 0 ? null : undefined;
  return { content: Buffer.from(image.join(''), 'latin1'), mode: written(newExec ?? isExec) };
}

/** A file's lines, each with its "\n" (the last one may lack it). */
function splitLines(text: string): string[] {
  const out = text.split('\n').map((l) => `${l}\n`);
  const last = out.pop()!;
  if (last !== '\n') out.push(last.slice(0, -1));
  return out;
}

/** Whether a git mode is an executable file; null for anything but a plain file. */
function executable(m: string): boolean | null {
  if (m === '100644') return false;
  if (m === '100755') return true;
  return null;
}
