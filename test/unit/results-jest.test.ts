import { describe, expect, it } from 'vitest';
import { appendArgs } from '../../harness/results/append-args.js';
import { jestAdapter } from '../../harness/results/jest.js';
import type { ParseInput } from '../../harness/results/types.js';
import { captured, capturedInput, statuses } from '../helpers/captured.js';

// Captured by test/helpers/capture-runner-output.sh: `npx jest` with the options jestAdapter appends.
const WORKDIR = '/WORK/jest';
async function input(): Promise<ParseInput> {
  return { ...(await capturedInput('jest', WORKDIR)), report: await captured('jest/report.json') };
}

describe('jest adapter', () => {
  it('appends --json with a report file to the jest command (after -- for an npm script)', async () => {
    expect(jestAdapter.prepare({ command: 'npx jest', workdir: '/w', scratchDir: '/s', env: {} })).toEqual({
      command: 'npx jest --json --outputFile=/s/jest.json',
      env: {},
      reportFile: '/s/jest.json',
    });
    expect(jestAdapter.prepare({ command: 'npm test', workdir: '/w', scratchDir: '/s', env: {} }).command).toBe(
      'npm test -- --json --outputFile=/s/jest.json',
    );
    expect((await captured('jest/command.txt')).trim()).toBe('npx jest --json --outputFile=/WORK/out/jest/jest.json');
  });

  it('reads file-relative ids with every describe title, and every status', async () => {
    const report = jestAdapter.parse(await input());
    expect(report.source).toBe('json');
    expect(statuses(report.tests)).toEqual({
      '__tests__/cart.test.js::outer > inner > deep': 'passed',
      '__tests__/cart.test.js::outer > inner > deep fails': 'failed',
      '__tests__/cart.test.js::outer > doubles 1': 'passed',
      '__tests__/cart.test.js::outer > doubles 2': 'failed',
      // A test.each row that repeats a name is a test of its own, numbered in report order.
      '__tests__/cart.test.js::outer > doubles 1 [2]': 'failed',
      '__tests__/cart.test.js::outer > skipped': 'skipped',
      '__tests__/cart.test.js::outer > later': 'skipped',
      '__tests__/cart.test.js::top level': 'passed',
      // jest fails the tests of a suite whose beforeAll threw.
      '__tests__/hook.test.js::needs db > reads': 'failed',
      // An afterAll that threw fails the file, not its (passed) test: one broken entry for the file.
      '__tests__/cleanup.test.js::fine': 'passed',
      '__tests__/cleanup.test.js': 'error',
      // Did not load.
      '__tests__/broken.test.js': 'error',
    });
    expect(report.counts).toEqual({ passed: 4, failed: 4, errors: 2, skipped: 2, total: 12 });
    expect(Number((await input()).exitCode)).toBe(1);
  });

  it('keeps the first lines of each failure, and the error of a file without its "Test suite failed to run" frame', async () => {
    const byId = new Map(jestAdapter.parse(await input()).tests.map((t) => [t.id, t.message]));
    expect(byId.get('__tests__/cart.test.js::outer > doubles 2')).toBe(
      'Error: expect(received).toBe(expected) // Object.is equality\n\nExpected: 5\nReceived: 4\n    at toBe (/WORK/jest/__tests__/cart.test.js:16:19)\n    at Object.<anonymous> (/WORK/npm/node_modules/jest-each/build/index.js:80:140)\n…',
    );
    expect(byId.get('__tests__/broken.test.js')!.split('\n')[0]).toBe("Cannot find module './missing' from '__tests__/broken.test.js'");
    expect(byId.get('__tests__/cleanup.test.js')!.split('\n')[0]).toBe('cleanup failed');
    expect(byId.get('__tests__/hook.test.js::needs db > reads')!.split('\n')[0]).toBe('Error: no database');
    expect(byId.get('__tests__/cart.test.js::top level')).toBeUndefined();
  });

  it('reads the JSON from stdout when there is no report file, and says why when there is none', async () => {
    const base = await input();
    const fromStdout = jestAdapter.parse({ ...base, report: null, stdout: `${base.report!.replace(/\n/g, '')}\n` });
    expect(fromStdout).toMatchObject({ source: 'stdout', note: 'jest left no JSON report file; its JSON on stdout was read' });
    expect(fromStdout.tests).toEqual(jestAdapter.parse(base).tests);
    expect(jestAdapter.parse({ ...base, report: null })).toMatchObject({ source: 'none', tests: [], note: 'jest left no JSON report' });
    expect(jestAdapter.parse({ ...base, report: '{"testResults": [' })).toMatchObject({
      source: 'none',
      note: expect.stringMatching(/^unreadable jest JSON: /),
    });
  });
});

describe('appendArgs', () => {
  it('puts the options after -- for an npm script, as they are elsewhere', () => {
    expect(appendArgs('npm test', '--x')).toBe('npm test -- --x');
    expect(appendArgs('npm run test:unit  ', '--x')).toBe('npm run test:unit -- --x');
    expect(appendArgs('cd app && npm t', '--x')).toBe('cd app && npm t -- --x');
    expect(appendArgs('npm test -- --ci', '--x')).toBe('npm test -- --ci --x');
    expect(appendArgs('yarn test', '--x')).toBe('yarn test --x');
    expect(appendArgs('npx jest --ci', '--x')).toBe('npx jest --ci --x');
  });
});
