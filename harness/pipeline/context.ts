import type { Fixture } from '../fixtures/load.js';
import type { ReadTree } from '../sandbox/core/tree.js';
import type { Sandbox, ExecResult, ExecOptions } from '../sandbox/core/types.js';
import type { FixtureEvent, StreamRecord } from './events.js';
import type { Phase } from './result.js';
import type { SetupCache } from './setup-cache.js';

/** Bytes of each output stream kept in the transcript (the exec keeps more for parsing). */
export const TRANSCRIPT_OUTPUT_BYTES = 64 * 1024;

/** What the steps of one fixture's run share. */
export interface FixtureContext {
  fixture: Fixture;
  sandbox: Sandbox;
  signal: AbortSignal;
  emit(event: FixtureEvent): void;
  /** Where setup results are cached (null: always run setup). */
  setupCache: SetupCache | null;
  /** The fixture's tree as its fingerprint read it, uploaded without reading it again (null: read at the upload). */
  tree?: ReadTree | null;
}

function record(text: string, info: ExecResult['stdoutInfo']): StreamRecord {
  const keep = TRANSCRIPT_OUTPUT_BYTES;
  const long = Buffer.byteLength(text) > keep;
  const kept = long ? `${text.slice(0, keep / 2)}\n[… redgreen: cut for the transcript …]\n${text.slice(-keep / 2)}` : text;
  return { text: kept, bytes: info.bytes, sha256: info.sha256, truncated: info.truncated || long, utf8: info.utf8 };
}

/** Runs a command in the fixture's sandbox and records it in the transcript. */
export async function runCommand(
  ctx: FixtureContext,
  phase: Phase,
  label: string,
  command: string,
  options: ExecOptions,
): Promise<ExecResult> {
  const env = { ...ctx.fixture.manifest.env, ...options.env };
  const result = await ctx.sandbox.exec(command, { ...options, env, signal: ctx.signal });
  ctx.emit({
    type: 'command',
    phase,
    label,
    command,
    cwd: options.cwd ?? '.',
    envKeys: Object.keys(env).sort(),
    exitCode: result.exitCode,
    signal: result.signal,
    timedOut: result.timedOut,
    durationMs: result.durationMs,
    stdout: record(result.stdout, result.stdoutInfo),
    stderr: record(result.stderr, result.stderrInfo),
  });
  return result;
}
