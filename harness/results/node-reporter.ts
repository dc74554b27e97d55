/**
 * Source of a node:test custom reporter, written into the sandbox's scratch folder. It turns the
 * runner's events into JSON lines with the file and the describe path of every test, which the
 * built-in JUnit reporter of Node 20 does not record.
 */
export const NODE_REPORTER_SOURCE = `
const stacks = new Map();
export default async function* redgreenReporter(source) {
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
      yield JSON.stringify({
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
}
`;
