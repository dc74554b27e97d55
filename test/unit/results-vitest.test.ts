import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import type { ParseInput } from '../../harness/results/types.js';
import { parseVitestJson, vitestAdapter } from '../../harness/results/vitest.js';

// Captured by test/helpers/capture-runner-output.sh: vitest run with the reporters the adapter appends.
const data = (f: string) => readFile(new URL(`../data/vitest/${f}`, import.meta.url), 'utf8');
const WORKDIR = '/WORK/vitest';

async function input(): Promise<ParseInput> {
  return {
    report: await data('report.json'),
    stdout: await data('stdout.txt'),
    stderr: await data('stderr.txt'),
    exitCode: Number(await data('exit-code')),
    workdir: WORKDIR,
  };
}

const statuses = (tests: { id: string; status: string }[]) => Object.fromEntries(tests.map((t) => [t.id, t.status]));

describe('vitest adapter', () => {
  it('appends its reporters to the vitest command', () => {
    expect(vitestAdapter.prepare({ command: 'npx vitest run', workdir: '/w', scratchDir: '/s', env: {} })).toEqual({
      command: 'npx vitest run --reporter=default --reporter=json --outputFile.json=/s/vitest.json',
      env: {},
      reportFile: '/s/vitest.json',
    });
  });

  it('reads file-relative ids with every describe title, and every status', async () => {
    const report = vitestAdapter.parse(await input());
    expect(report.source).toBe('json');
    expect(statuses(report.tests)).toEqual({
      'src/a.test.ts::outer > inner > deep': 'passed',
      'src/a.test.ts::outer > inner > deep fails': 'failed',
      'src/a.test.ts::outer > doubles 1': 'passed',
      'src/a.test.ts::outer > doubles 2': 'failed',
      // An it.each row that repeats a name is a test of its own, numbered in report order.
      'src/a.test.ts::outer > doubles 1 [2]': 'failed',
      'src/a.test.ts::outer > skipped': 'skipped',
      'src/a.test.ts::outer > later': 'skipped',
      'src/a.test.ts::top level': 'passed',
      // Did not load: one broken test named after the file.
      'src/broken.test.ts': 'error',
      // beforeAll threw: vitest marks the test skipped and only the file failed.
      'src/hook.test.ts::needs db > reads': 'skipped',
      'src/hook.test.ts': 'error',
    });
    expect(report.counts).toEqual({ passed: 3, failed: 3, errors: 2, skipped: 3, total: 11 });
  });

  it('keeps the first lines of each failure message, and the load error of a file', async () => {
    const byId = new Map(vitestAdapter.parse(await input()).tests.map((t) => [t.id, t.message]));
    expect(byId.get('src/a.test.ts::outer > doubles 2')).toMatch(
      /^AssertionError: expected 4 to be 5 \/\/ Object\.is equality\n {4}at \/WORK\/vitest\/src\/a\.test\.ts:\d+:\d+\n/,
    );
    expect(byId.get('src/a.test.ts::outer > doubles 2')!.split('\n')).toHaveLength(7); // six lines and "…"
    expect(byId.get('src/broken.test.ts')).toBe("Cannot find module './missing.js' imported from /WORK/vitest/src/broken.test.ts");
    expect(byId.get('src/hook.test.ts')).toBe('the file failed outside its tests (a hook or its import)');
    expect(byId.get('src/a.test.ts::outer > inner > deep')).toBeUndefined();
  });

  it('adds no file-level entry for a file whose failures are its tests', async () => {
    const ids = parseVitestJson(await data('report.json'), WORKDIR).map((t) => t.id);
    expect(ids).not.toContain('src/a.test.ts');
  });

  it('says why when the report is missing or unreadable', async () => {
    const base = await input();
    expect(vitestAdapter.parse({ ...base, report: null })).toMatchObject({ source: 'none', tests: [], note: 'vitest left no JSON report' });
    expect(vitestAdapter.parse({ ...base, report: '{"testResults": [' })).toMatchObject({
      source: 'none',
      note: expect.stringMatching(/^unreadable vitest JSON: /),
    });
  });
});
