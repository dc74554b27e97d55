import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { resolveRunRef } from '../config/run-ref.js';
import { jsonProblem, RedgreenError } from '../errors.js';
import type { FixtureResult } from '../pipeline/result.js';
import { KNOWN_TYPES, LineSchema, type TranscriptLine } from './line-schema.js';
import { RUN_SCHEMA, RunStateSchema, type RunState } from './schema.js';

/** A line that could not be read; the lines around it still are. Numbers are 1-based. */
export interface LineProblem {
  line: number;
  message: string;
}

export interface ParsedJsonl {
  lines: (TranscriptLine & { line: number })[];
  problems: LineProblem[];
  /** The number of a last line cut off while it was written (kill -9, power loss, a full disk). */
  torn: number | null;
}

export interface FixtureTranscript extends ParsedJsonl {
  fixtureId: string;
  file: string;
  /** The final `result` line, when the fixture finished. */
  result: FixtureResult | null;
  /** The file does not exist: the fixture never started. */
  missing: boolean;
}

export interface TranscriptRun {
  dir: string;
  state: RunState;
}

const issues = (e: { issues: { path: PropertyKey[]; message: string }[] }) =>
  e.issues
    .slice(0, 3)
    .map((i) => `${i.path.map(String).join('.') || '(line)'}: ${i.message}`)
    .join('; ');

/**
 * Parses a JSONL transcript: a torn last line is noted, a corrupted line is reported by number.
 * `only` keeps just those event types (others are skipped unparsed and unvalidated, e.g. the bulky result).
 */
export function parseJsonl(text: string, only?: ReadonlySet<string>): ParsedJsonl {
  const raw = text.split('\n');
  const endsCleanly = text.endsWith('\n') || text === '';
  if (raw.at(-1) === '') raw.pop();
  const out: ParsedJsonl = { lines: [], problems: [], torn: null };
  // Each wanted event holds its type as the writer spells it (a quote inside a string is escaped):
  // a line without any of them is skipped before it is parsed.
  const marks = only && [...only].map((t) => `"type":${JSON.stringify(t)}`);
  raw.forEach((s, i) => {
    const line = i + 1;
    if (!s.trim() || (marks && !marks.some((m) => s.includes(m)))) return;
    let json: unknown;
    try {
      json = JSON.parse(s);
    } catch (e) {
      if (i === raw.length - 1 && !endsCleanly) out.torn = line;
      else out.problems.push({ line, message: `not valid JSON (${(e as Error).message})` });
      return;
    }
    const type = (json as { type?: unknown } | null)?.type;
    if (typeof type === 'string' && !KNOWN_TYPES.has(type)) {
      out.problems.push({ line, message: `unknown event type "${type}" (written by a newer redgreen?), skipped` });
      return;
    }
    if (only && typeof type === 'string' && !only.has(type)) return;
    const parsed = LineSchema.safeParse(json);
    if (parsed.success) out.lines.push({ ...parsed.data, line });
    else out.problems.push({ line, message: `not a transcript event (${issues(parsed.error)})` });
  });
  return out;
}

/** Explains why a run.json of another schema version cannot be read, naming both versions. */
function refuseVersion(file: string, json: Record<string, unknown>): never {
  const schema = json.schema;
  const recordedBy = (json.harness as { version?: unknown } | undefined)?.version;
  const by = typeof recordedBy === 'string' ? ` (recorded by redgreen ${recordedBy})` : '';
  const hint = 'replay it with the redgreen version that recorded it';
  if (typeof schema !== 'string') {
    throw new RedgreenError(
      'TRANSCRIPT_SCHEMA',
      `${file}: no schema version${by}: a transcript from before versioned transcripts; this redgreen reads ${RUN_SCHEMA}`,
      hint,
    );
  }
  const m = /^redgreen\.run\/(\d+)$/.exec(schema);
  const current = Number(RUN_SCHEMA.split('/')[1]);
  const age = !m ? 'an unknown transcript schema' : Number(m[1]) < current ? 'an older transcript schema' : 'a newer transcript schema';
  throw new RedgreenError(
    'TRANSCRIPT_SCHEMA',
    `${file}: schema "${schema}"${by} is ${age}; this redgreen reads ${RUN_SCHEMA}`,
    m && Number(m[1]) > current ? 'upgrade redgreen to replay it' : hint,
  );
}

/** Finds a run's transcript folder: a path to it (or to its run.json), or a run id under `transcriptsDir`. */
export async function locateRun(given: string, transcriptsDir: string): Promise<string> {
  const ref = await resolveRunRef(given, transcriptsDir);
  for (const candidate of [ref, path.join(transcriptsDir, ref)]) {
    const st = await stat(candidate).catch(() => null);
    if (st?.isDirectory()) return path.resolve(candidate);
    if (st?.isFile() && path.basename(candidate) === 'run.json') return path.resolve(path.dirname(candidate));
  }
  throw new RedgreenError('TRANSCRIPT_NOT_FOUND', `no transcript at ${ref}`, `pass transcripts/<run-id> or a run id in ${transcriptsDir}`);
}

/** Reads and checks run.json: its schema version first, then its shape. */
export async function openRun(dir: string): Promise<TranscriptRun> {
  const file = path.join(dir, 'run.json');
  const text = await readFile(file, 'utf8').catch(() => null);
  if (text === null)
    throw new RedgreenError(
      'TRANSCRIPT_NOT_FOUND',
      `${file}: not found`,
      'a transcript folder holds run.json and one <fixture>.jsonl per fixture',
    );
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch (e) {
    throw new RedgreenError('TRANSCRIPT_INVALID', `${file}: not valid JSON (${jsonProblem(text, e)})`);
  }
  if (typeof json !== 'object' || json === null || json.schema !== RUN_SCHEMA) refuseVersion(file, json ?? {});
  const parsed = RunStateSchema.safeParse(json);
  if (!parsed.success) throw new RedgreenError('TRANSCRIPT_INVALID', `${file}: not a valid ${RUN_SCHEMA} run (${issues(parsed.error)})`);
  return { dir, state: parsed.data };
}

/** The fixtures of a run in their recorded order. */
export function fixtureIds(run: TranscriptRun): string[] {
  return Object.keys(run.state.fixtures);
}

/** Reads one fixture's JSONL (optionally `only` some event types). A transcript name that leaves the folder is refused, not followed. */
export async function readFixture(run: TranscriptRun, fixtureId: string, only?: ReadonlySet<string>): Promise<FixtureTranscript> {
  const name = run.state.fixtures[fixtureId]?.transcript ?? `${fixtureId}.jsonl`;
  const file = path.join(run.dir, name);
  const base: FixtureTranscript = { fixtureId, file, lines: [], problems: [], torn: null, result: null, missing: false };
  if (path.basename(name) !== name || !name.endsWith('.jsonl')) {
    return {
      ...base,
      problems: [{ line: 0, message: `run.json names transcript "${name}", which is not a .jsonl file of this folder: not read` }],
    };
  }
  const text = await readFile(file, 'utf8').catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return null;
    throw new RedgreenError('TRANSCRIPT_INVALID', `${file}: cannot read (${e.message})`);
  });
  if (text === null) return { ...base, missing: true };
  const parsed = parseJsonl(text, only);
  const last = parsed.lines.findLast((l) => l.type === 'result');
  return { ...base, ...parsed, result: last?.type === 'result' ? last.result : null };
}
