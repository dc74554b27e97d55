import path from 'node:path';
import { stripAnsi } from '../errors.js';
import { firstLines, numberRepeats, type TestCase, type TestStatus } from './types.js';

/** The JSON report jest writes with `--json`, and vitest's json reporter copies. */
interface JestStyleJson {
  testResults?: {
    name: string;
    status?: string;
    message?: string;
    assertionResults?: {
      ancestorTitles?: string[];
      title: string;
      status: string;
      duration?: number | null;
      failureMessages?: string[];
    }[];
  }[];
}

function statusOf(s: string): TestStatus {
  if (s === 'passed') return 'passed';
  if (s === 'failed') return 'failed';
  return 'skipped'; // skipped, pending, todo, disabled
}

/**
 * jest frames a file's own failure as `● Test suite failed to run` and indents the error under it:
 * the header says nothing the entry does not, so the message starts at the error.
 */
function fileMessage(message: string): string | undefined {
  const lines = stripAnsi(message)
    .split('\n')
    .filter((l) => !/^\s*\u25cf /.test(l));
  const indent = Math.min(...lines.filter((l) => l.trim()).map((l) => /^ */.exec(l)![0].length));
  return firstLines(lines.map((l) => l.slice(Number.isFinite(indent) ? indent : 0)).join('\n'));
}

/** `src/a.test.ts::outer > inner > deep`: the file relative to the workspace, then the titles. */
export function parseJestStyleJson(json: string, workdir: string): TestCase[] {
  const doc = JSON.parse(json) as JestStyleJson;
  const tests: TestCase[] = [];
  for (const file of doc.testResults ?? []) {
    const rel = path.relative(workdir, file.name).split(path.sep).join('/');
    const cases = file.assertionResults ?? [];
    for (const a of cases) {
      tests.push({
        id: `${rel}::${[...(a.ancestorTitles ?? []), a.title].join(' > ')}`,
        status: statusOf(a.status),
        ...(typeof a.duration === 'number' ? { durationMs: Math.round(a.duration) } : {}),
        ...(a.failureMessages?.length ? { message: firstLines(stripAnsi(a.failureMessages.join('\n'))) } : {}),
      });
    }
    // A file that failed with no failing test (it did not load, or a hook threw outside its tests:
    // vitest's beforeAll, jest's afterAll) is one broken test named after the file.
    if (file.status === 'failed' && !cases.some((a) => a.status === 'failed')) {
      const message = (file.message && fileMessage(file.message)) || 'the file failed outside its tests (a hook or its import)';
      tests.push({ id: rel, status: 'error', message });
    }
  }
  return numberRepeats(tests);
}
