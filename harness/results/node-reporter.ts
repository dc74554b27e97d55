/** The type of the reporter's last line. */
export const NODE_REPORT_END = 'redgreen:end';

/**
 * Source of a node:test custom reporter, written into the sandbox's scratch folder. It turns the
 * runner's events into JSON lines with the file and the describe path of every test, which the
 * built-in JUnit reporter of Node 20 does not record. Every line carries a nonce drawn in the
 * process that reports (with \`node --test\`, not the one running the tests), and a last line counts
 * them: lines a test process writes into the file, or a report cut short, do not pass for its own.
 */
export const NODE_REPORTER_SOURCE = `
import { randomUUID } from 'node:crypto';
const stacks = new Map();
const nonce = randomUUID();
export default async function* redgreenReporter(source) {
  let lines = 0;
  for await (const event of source) {
    const d = event.data || {};
    if (event.type === 'test:start') {
      const stack = stacks.get(d.file) || [];
      stack.length = d.nesting;
      stack.push(d.name);
      stacks.set(d.file, stack);
    } else if (event.type === 'test:pass' || event.type === 'test:fail') {
      const stack = (stacks.get(d.file) || []).slice(0, d.nesting);
      const details = d.details || {};
      const err = details.error;
      lines++;
      yield JSON.stringify({
        n: nonce,
        file: d.file || null,
        path: [...stack, d.name],
        type: details.type || 'test',
        // A todo test may fail without failing the run (node counts it as todo): not a failure.
        status: d.skip !== undefined || d.todo !== undefined ? 'skipped' : event.type === 'test:pass' ? 'passed' : 'failed',
        durationMs: typeof details.duration_ms === 'number' ? Math.round(details.duration_ms) : undefined,
        message: err ? String((err.cause && err.cause.message) || err.message || err).slice(0, 2000) : undefined,
      }) + '\\n';
    }
  }
  yield JSON.stringify({ n: nonce, type: '${NODE_REPORT_END}', lines }) + '\\n';
}
`;

export interface NodeReportLines {
  /** The reporter's own test lines (all lines when it left no last line to tell them by). */
  lines: string[];
  /** Lines with another nonce, or none: written by something else. */
  foreign: number;
  /** What the reporter's last line says, or null when it never wrote one. */
  end: { lines: number } | null;
}

/** Splits the report into the reporter's lines and the others, by the nonce of its last line. */
export function ownLines(jsonl: string): NodeReportLines {
  const all = jsonl
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => {
      try {
        return { l, v: JSON.parse(l) as { n?: unknown; type?: unknown; lines?: unknown } | null };
      } catch {
        return { l, v: null }; // a torn last line when the run was killed
      }
    });
  const end = all.findLast((x) => x.v?.type === NODE_REPORT_END);
  if (!end) return { lines: all.map((x) => x.l), foreign: 0, end: null };
  const own = all.filter((x) => x !== end && x.v?.n === end.v!.n);
  return { lines: own.map((x) => x.l), foreign: all.length - own.length - 1, end: { lines: Number(end.v!.lines) } };
}
