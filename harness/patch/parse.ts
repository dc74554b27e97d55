import { RedgreenError } from '../errors.js';

/** What one file section of a diff does, as far as safety and syncing need to know. */
export interface FileChange {
  /** Path before the change (null for a new file), prefix stripped. */
  oldPath: string | null;
  /** Path after the change (null for a deletion), prefix stripped. */
  newPath: string | null;
  kind: 'modify' | 'add' | 'delete' | 'rename' | 'copy';
  oldMode?: string;
  newMode?: string;
  binary: boolean;
  /** Lines added to a new symlink (its target), when newMode is 120000. */
  symlinkTarget?: string;
  hunks: number;
  /** This section's lines in the patch text split at "\n": [first, end) (for reading its hunks). */
  lines: [number, number];
}

export interface ParsedPatch {
  files: FileChange[];
  /** True when every section has `diff --git` headers (a/ b/ prefixes). */
  gitStyle: boolean;
  /** The -p level git apply needs. */
  strip: number;
  crlf: boolean;
}

const C_ESCAPES: Record<string, number> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13, '"': 34, '\\': 92 };

/** Git quotes paths with special characters C-style, with octal bytes for UTF-8. */
export function unquotePath(raw: string): string {
  if (!raw.startsWith('"')) return raw;
  const bytes: number[] = [];
  for (let i = 1; i < raw.length; i++) {
    const ch = raw[i]!;
    if (ch === '"') break;
    if (ch !== '\\') {
      bytes.push(...Buffer.from(ch, 'utf8'));
      continue;
    }
    const next = raw[++i] ?? '';
    if (/[0-7]/.test(next)) {
      bytes.push(parseInt(raw.slice(i, i + 3), 8));
      i += 2;
    } else bytes.push(C_ESCAPES[next] ?? next.charCodeAt(0));
  }
  return Buffer.from(bytes).toString('utf8');
}

/** Splits `a/x b/y` (either side possibly quoted) from a `diff --git` line. */
function splitGitPaths(rest: string): [string, string] | null {
  if (rest.startsWith('"')) {
    const end = rest.search(/[^\\]" /);
    if (end < 0) return null;
    return [rest.slice(0, end + 2), rest.slice(end + 3)];
  }
  // Unquoted: both sides have the same length when the path did not change.
  const half = (rest.length - 1) / 2;
  if (Number.isInteger(half) && rest[half] === ' ' && rest.slice(2, half) === rest.slice(half + 3)) {
    return [rest.slice(0, half), rest.slice(half + 1)];
  }
  const i = rest.indexOf(' b/');
  if (i >= 0) return [rest.slice(0, i), rest.slice(i + 1)];
  const q = rest.indexOf(' "');
  return q >= 0 ? [rest.slice(0, q), rest.slice(q + 1)] : null;
}

function headerPath(raw: string): string | null {
  const p = unquotePath(raw.replace(/\t.*$/, '').trimEnd());
  return p === '/dev/null' ? null : p;
}

type Section = FileChange & {
  git: boolean;
  /** The two names of the `diff --git` line, prefixes kept. */
  pair: [string, string] | null;
  /** `rename from`/`copy from` names: git writes them without a prefix. */
  fromName?: string;
  toName?: string;
};

const section = (s: Omit<Section, 'lines'>, at: number): Section => ({ ...s, lines: [at, at] });

/**
 * How a section votes for the -p level: 1 when its two sides start with different folders
 * (a/ b/, old/ new/), 0 when a side has no folder or both share it (`git diff --no-prefix`,
 * `diff -u src/x.orig src/x`); null when it cannot tell (absolute paths only).
 */
function stripVote(s: Section): 0 | 1 | null {
  const sides = (s.pair ?? [s.oldPath, s.newPath]).filter((p): p is string => p !== null && !p.startsWith('/'));
  const parts = sides.map((p) => p.split('/'));
  if (!parts.length) return null;
  if (parts.some((x) => x.length < 2)) return 0;
  if (parts.length === 2) return parts[0]![0] !== parts[1]![0] ? 1 : 0;
  return parts[0]![0] === 'a' || parts[0]![0] === 'b' ? 1 : 0;
}

function stripPrefix(p: string | null, strip: number): string | null {
  // An absolute path stays absolute so that the guard sees it and refuses it.
  if (p === null || strip === 0 || p.startsWith('/')) return p;
  const parts = p.split('/');
  return parts.slice(strip).join('/');
}

/**
 * Reads the headers of a unified or git-style diff. It does not validate hunks (git apply
 * does); it finds every path the patch touches so they can be checked before anything is written.
 */
export function parsePatch(text: string): ParsedPatch {
  if (!text.trim()) throw new RedgreenError('PATCH_EMPTY', 'the patch is empty', 'an empty patch changes nothing');
  const lines = text.split('\n');
  const files: Section[] = [];
  let cur: Section | null = null;
  let inBinary = false;
  const push = (end: number) => {
    if (!cur) return;
    cur.lines[1] = end;
    files.push(cur);
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.replace(/\r$/, '');
    if (line.startsWith('diff --git ')) {
      push(i);
      inBinary = false;
      const pair = splitGitPaths(line.slice('diff --git '.length));
      const names: [string, string] | null = pair ? [unquotePath(pair[0]), unquotePath(pair[1])] : null;
      cur = section(
        { oldPath: names?.[0] ?? null, newPath: names?.[1] ?? null, kind: 'modify', binary: false, hunks: 0, git: true, pair: names },
        i,
      );
      continue;
    }
    if (line.startsWith('--- ') && lines[i + 1]?.startsWith('+++ ')) {
      const oldP = headerPath(line.slice(4));
      const newP = headerPath(lines[i + 1]!.replace(/\r$/, '').slice(4));
      if (!cur || cur.hunks > 0 || !cur.git) {
        push(i);
        cur = section({ oldPath: oldP, newPath: newP, kind: 'modify', binary: false, hunks: 0, git: false, pair: null }, i);
      } else {
        cur.oldPath = oldP;
        cur.newPath = newP;
      }
      if (oldP === null) cur.kind = 'add';
      if (newP === null) cur.kind = 'delete';
      i++;
      continue;
    }
    if (!cur) continue;
    if (line.startsWith('@@ ')) cur.hunks++;
    else if (inBinary) continue;
    else if (line.startsWith('new file mode ')) {
      cur.kind = 'add';
      cur.newMode = line.slice(14).trim();
      cur.oldPath = null;
    } else if (line.startsWith('deleted file mode ')) {
      cur.kind = 'delete';
      cur.oldMode = line.slice(18).trim();
      cur.newPath = null;
    } else if (line.startsWith('old mode ')) cur.oldMode = line.slice(9).trim();
    else if (line.startsWith('new mode ')) cur.newMode = line.slice(9).trim();
    else if (line.startsWith('rename from ')) {
      cur.kind = 'rename';
      cur.fromName = unquotePath(line.slice(12));
    } else if (line.startsWith('rename to ')) cur.toName = unquotePath(line.slice(10));
    else if (line.startsWith('copy from ')) {
      cur.kind = 'copy';
      cur.fromName = unquotePath(line.slice(10));
    } else if (line.startsWith('copy to ')) cur.toName = unquotePath(line.slice(8));
    else if (line === 'GIT binary patch' || /^Binary files .* differ$/.test(line)) {
      cur.binary = true;
      inBinary = line === 'GIT binary patch';
    } else if (cur.newMode === '120000' && cur.kind === 'add' && line.startsWith('+') && cur.hunks > 0) {
      cur.symlinkTarget = line.slice(1);
    }
  }
  push(lines.length);
  const meaningful = files.filter((f) => f.hunks > 0 || f.binary || f.oldMode || f.newMode || f.kind !== 'modify');
  if (!meaningful.length) {
    throw new RedgreenError(
      'PATCH_NOT_A_DIFF',
      'the patch is not a unified diff (no "diff --git", "---/+++" or "@@" sections found)',
      'produce it with `git diff` or `diff -u`',
    );
  }
  const gitStyle = meaningful.every((f) => f.git);
  const votes = meaningful.map(stripVote).filter((v) => v !== null);
  const strip = votes.length && votes.every((v) => v === 1) ? 1 : 0;
  return {
    files: meaningful.map(({ oldPath, newPath, kind, oldMode, newMode, binary, symlinkTarget, hunks, fromName, toName, lines }) => ({
      oldPath: fromName ?? stripPrefix(oldPath, strip),
      newPath: toName ?? stripPrefix(newPath, strip),
      kind,
      binary,
      hunks,
      lines,
      ...(oldMode ? { oldMode } : {}),
      ...(newMode ? { newMode } : {}),
      ...(symlinkTarget !== undefined ? { symlinkTarget } : {}),
    })),
    gitStyle,
    strip,
    crlf: /\r\n/.test(text),
  };
}

/** Every path a patch reads or writes. */
export function touchedPaths(p: ParsedPatch): string[] {
  const out = new Set<string>();
  for (const f of p.files) {
    if (f.oldPath !== null) out.add(f.oldPath);
    if (f.newPath !== null) out.add(f.newPath);
  }
  return [...out];
}
