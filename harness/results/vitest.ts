import path from 'node:path';
import { countTests, numberRepeats, firstLines, type RunnerAdapter, type TestCase, type TestStatus } from './types.js';

interface VitestJson {
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

const ANSI = /\u001b\[[0-9;]*m/g;

function statusOf(s: string): TestStatus {
  if (s === 'passed') return 'passed';
  if (s === 'failed') return 'failed';
  return 'skipped'; // skipped, pending, todo, disabled
}

/** `src/a.test.ts::outer > inner > deep`: the file relative to the workspace, then the titles. */
export function parseVitestJson(json: string, workdir: string): TestCase[] {
  const doc = JSON.parse(json) as VitestJson;
  const tests: TestCase[] = [];
  for (const file of doc.testResults ?? []) {
    const rel = path.relative(workdir, file.name).split(path.sep).join('/');
    const cases = file.assertionResults ?? [];
    for (const a of cases) {
      tests.push({
        id: `${rel}::${[...(a.ancestorTitles ?? []), a.title].join(' > ')}`,
        status: statusOf(a.status),
        ...(typeof a.duration === 'number' ? { durationMs: Math.round(a.duration) } : {}),
        ...(a.failureMessages?.length ? { message: firstLines(a.failureMessages.join('\n').replace(ANSI, '')) } : {}),
      });
    }
    // A file that failed with no failing test (it did not load, or a beforeAll hook threw and its
    // tests were skipped) is one broken test named after the file.
    if (file.status === 'failed' && !cases.some((a) => a.status === 'failed')) {
      const message = file.message
        ? firstLines(file.message.replace(ANSI, ''))
        : 'the file failed outside its tests (a hook or its import)';
      tests.push({ id: rel, status: 'error', message: message! });
    }
  }
  return numberRepeats(tests);
}

export const vitestAdapter: RunnerAdapter = {
  runner: 'vitest',
  infrastructure: ['package.json', 'vitest.config.*', 'vite.config.*', 'vitest.workspace.*', 'vitest.setup.*', 'tsconfig.json', '.npmrc'],
  prepare(ctx) {
    const reportFile = `${ctx.scratchDir}/vitest.json`;
    // vitest reads reporters from its CLI only, so they are appended: the command must end with
    // the vitest invocation (`npx vitest run`, `npm test --`), which `validate` checks.
    const command = `${ctx.command} --reporter=default --reporter=json --outputFile.json=${reportFile}`;
    return { command, env: {}, reportFile };
  },
  parse(input) {
    if (input.report === null) return { source: 'none', tests: [], counts: countTests([]), note: 'vitest left no JSON report' };
    try {
      const tests = parseVitestJson(input.report, input.workdir);
      return { source: 'json', tests, counts: countTests(tests) };
    } catch (e) {
      return { source: 'none', tests: [], counts: countTests([]), note: `unreadable vitest JSON: ${(e as Error).message}` };
    }
  },
};
