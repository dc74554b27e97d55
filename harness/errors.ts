/**
 * Errors with a stable `code` (like the E2B SDK): callers branch on the code, users read the
 * message and the hint. `exitCode` follows the design: 2 usage/config, 3 harness/infrastructure.
 */
export type ErrorCode =
  | 'USAGE'
  /** A redgreen.config.* that cannot be loaded or names an unknown option. */
  | 'CONFIG_INVALID'
  | 'MANIFEST_INVALID'
  | 'FIXTURE_NOT_FOUND'
  | 'ORACLE_MISSING'
  | 'PATCH_NOT_A_DIFF'
  | 'PATCH_EMPTY'
  | 'PATCH_UNSAFE'
  | 'PATCH_DOES_NOT_APPLY'
  | 'UPLOAD_UNSAFE'
  | 'SANDBOX_DESTROYED'
  | 'SANDBOX_PATH_UNSAFE'
  | 'SANDBOX_FAILED'
  /** The runner or a tool it needs is not installed where the tests run: infrastructure, not retried. */
  | 'TOOL_MISSING'
  /** A fixture's setup command failed; retried once, then the fixture's problem. */
  | 'SETUP_FAILED'
  /** Setup had the network and could not reach it (a name that does not resolve): the machine's, retried, never the fixture's. */
  | 'SETUP_NETWORK'
  | 'TRANSCRIPT_NOT_FOUND'
  | 'TRANSCRIPT_INVALID'
  | 'TRANSCRIPT_SCHEMA'
  /** A transcript line or run.json could not be written (disk full, folder gone): the run's, not a fixture's. */
  | 'TRANSCRIPT_WRITE'
  | 'REPORT_NOT_FOUND'
  | 'REPORT_INVALID'
  | 'INTERRUPTED'
  /** A repository that cannot be read: not a git repository, or a URL that cannot be cloned. */
  | 'REPO_NOT_FOUND'
  /** A commit the repository does not have (after fetching, for a mirror). */
  | 'COMMIT_NOT_FOUND'
  /** A commit that cannot make a fixture: a merge, a root commit, no test change, no source change. */
  | 'COMMIT_UNSUITABLE'
  /** A fixture's test patch does not apply to its commit. */
  | 'TEST_PATCH_DOES_NOT_APPLY'
  /** A dataset instance (SWE-bench) or a spec file that is missing fields or has wrong ones. */
  | 'INSTANCE_INVALID'
  /** Another redgreen process held a shared cache's lock (a mirror being cloned) for too long. */
  | 'LOCK_TIMEOUT'
  | 'INTERNAL';

const CONFIG_CODES: ReadonlySet<ErrorCode> = new Set([
  'USAGE',
  'CONFIG_INVALID',
  'MANIFEST_INVALID',
  'FIXTURE_NOT_FOUND',
  'ORACLE_MISSING',
  'TRANSCRIPT_NOT_FOUND',
  'TRANSCRIPT_INVALID',
  'TRANSCRIPT_SCHEMA',
  'REPORT_NOT_FOUND',
  'REPORT_INVALID',
  'REPO_NOT_FOUND',
  'COMMIT_NOT_FOUND',
  'COMMIT_UNSUITABLE',
  'TEST_PATCH_DOES_NOT_APPLY',
  'INSTANCE_INVALID',
]);

export class RedgreenError extends Error {
  override readonly name = 'RedgreenError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly hint?: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  get exitCode(): number {
    if (this.code === 'INTERRUPTED') return 130;
    return CONFIG_CODES.has(this.code) ? 2 : 3;
  }
}

export function isRedgreenError(e: unknown, code?: ErrorCode): e is RedgreenError {
  return e instanceof RedgreenError && (code === undefined || e.code === code);
}

/** A one-line, human description of anything thrown. */
export function describeError(e: unknown): string {
  if (e instanceof RedgreenError) return e.hint ? `${e.message} (${e.hint})` : e.message;
  if (e instanceof Error) return e.message;
  return String(e);
}

/** Terminal escapes (colours, cursor moves, titles): tools print them even into a pipe (pip, jest, uvu do). */
const ANSI = /\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)/g;

/** `text` without terminal escapes. */
export const stripAnsi = (text: string): string => text.replace(ANSI, '');
/** A line that names what went wrong ("ERROR: No matching distribution…", "npm ERR!", "fatal: …"). */
const NAMES_ERROR = /^\s*(?:error|fatal|npm err!|e)\b[:!]?\s/i;

/**
 * The last lines of a command's output, on one line, as plain text, for a reason a user can act
 * on. A tool whose last lines are only an epilogue ("See above for output") named the error
 * earlier: that first line naming it comes first.
 */
export function tailOf(text: string, lines = 3): string {
  const all = stripAnsi(text)
    .split('\n')
    .map((l) => l.trimEnd())
    .filter((l) => l.trim());
  const tail = all.slice(-lines).join(' ⏎ ').slice(-400);
  const named = all.slice(0, -lines).find((l) => NAMES_ERROR.test(l));
  return named ? `${named.trim().slice(0, 200)} ⏎ … ⏎ ${tail.slice(-300)}` : tail;
}

/**
 * JSON.parse's complaint about `text` with the place as line:column, which an editor can jump to
 * (V8 on Node 20 gives only a character offset).
 */
export function jsonProblem(text: string, e: unknown): string {
  const message = e instanceof Error ? e.message : String(e);
  const m = /^(.*?)(?: in JSON)? at position (\d+)(?: \(line \d+ column \d+\))?$/s.exec(message);
  const at = m ? Number(m[2]) : /^Unexpected end of JSON input/.test(message) ? text.length : null;
  if (at === null) return message;
  const before = text.slice(0, at);
  const line = before.split('\n').length;
  const column = before.length - before.lastIndexOf('\n');
  return `${m ? m[1] : 'unexpected end of the text'} at line ${line}, column ${column}`;
}
