import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { diffTrees } from '../../harness/fixtures/scaffold.js';
import { NPM_TEMPLATES } from '../../harness/fixtures/templates-js.js';
import { makeProject, selfcheckProject, type InlineFixture, type Project } from '../helpers/project.js';

// Inline fixtures of the npm runners through the real scheduler and local backend: RED, the
// oracle, GREEN, with the ids each adapter promises, on the cases their parsers handle apart (a
// hook that fails, a crash, one test file). The runners come from the npm registry once, at the
// versions the templates pin; each fixture links them in its setup.

let modules = '';
let project: Project | undefined;

beforeAll(async () => {
  modules = await mkdtemp(path.join(os.tmpdir(), 'rg-js-runners-'));
  const pins = Object.values(NPM_TEMPLATES).map((t) => {
    const deps = (JSON.parse(t.files['package.json']!) as { devDependencies: Record<string, string> }).devDependencies;
    return Object.entries(deps).map(([name, version]) => `${name}@${version}`)[0]!;
  });
  await writeFile(path.join(modules, 'package.json'), '{ "private": true }\n');
  await promisify(execFile)('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', ...pins], { cwd: modules });
}, 300_000);

afterAll(async () => {
  await project?.cleanup();
  await rm(modules, { recursive: true, force: true });
});

const SRC = 'export function add(a, b) {\n  return a - b;\n}\n';
const FIX = { 'src/calc.js': 'export function add(a, b) {\n  return a + b;\n}\n' };

async function fixture(runner: string, command: string, test: Record<string, string>): Promise<InlineFixture> {
  const files = { 'package.json': '{ "type": "module", "private": true }\n', 'src/calc.js': SRC, ...test };
  return {
    manifest: {
      language: 'javascript',
      runner,
      setup: { commands: [`ln -s ${modules}/node_modules node_modules`], timeoutSec: 60 },
      test: { command, timeoutSec: 120 },
      protected: ['test/**'],
    },
    files,
    oracle: await diffTrees(files, FIX),
  };
}

describe('npm runners end to end', () => {
  test('RED, oracle, GREEN with file-qualified ids; a hook that fails and a crash are failures, never passes', async () => {
    project = await makeProject({
      // uvu hides a before hook's error and exits 0: the suite is an error entry, so RED still fails.
      uvu_hook: await fixture('uvu', 'npx uvu test', {
        'test/calc.test.js': `import { suite } from 'uvu';\nimport * as assert from 'uvu/assert';\nimport { add } from '../src/calc.js';\n\nconst db = suite('db');\ndb.before(() => {\n  if (add(1, 1) !== 2) throw new Error('setup needs add');\n});\ndb('reads', () => assert.ok(true));\ndb.run();\n`,
      }),
      // One test file: ava's TAP would not name it; the worker module does.
      ava_single: await fixture('ava', 'npx ava', {
        'test/calc.test.js': `import test from 'ava';\nimport { add } from '../src/calc.js';\n\ntest('adds', (t) => t.is(add(2, 3), 5));\ntest('zero', (t) => t.is(add(4, 0), 4));\n`,
      }),
      mocha_hook: await fixture('mocha', 'npx mocha', {
        'test/calc.test.js': `import assert from 'node:assert/strict';\nimport { add } from '../src/calc.js';\n\ndescribe('calc', () => {\n  before(() => assert.equal(add(1, 1), 2));\n  it('adds', () => assert.equal(add(2, 3), 5));\n});\nit('zero', () => assert.equal(add(4, 0), 4));\n`,
      }),
      // tape dies on the throw: the stream stops inside that test.
      tape_crash: await fixture('tap', "npx tape 'test/*.js'", {
        'test/calc.test.js': `import test from 'tape';\nimport { add } from '../src/calc.js';\n\ntest('zero', (t) => {\n  t.equal(add(4, 0), 4);\n  t.end();\n});\ntest('adds', (t) => {\n  if (add(2, 3) !== 5) throw new Error('wrong sum');\n  t.end();\n});\n`,
      }),
      jest_plain: {
        ...(await fixture('jest', 'npx jest', {
          'test/calc.test.js': `const { add } = require('../src/calc.cjs');\n\ndescribe('add', () => {\n  test('adds', () => expect(add(2, 3)).toBe(5));\n  test('zero', () => expect(add(4, 0)).toBe(4));\n});\n`,
          'src/calc.cjs': 'exports.add = (a, b) => a - b;\n',
        })),
        oracle: await diffTrees(
          { 'package.json': '{ "private": true }\n', 'src/calc.cjs': 'exports.add = (a, b) => a - b;\n' },
          { 'src/calc.cjs': 'exports.add = (a, b) => a + b;\n' },
        ),
      },
    });
    // jest runs CommonJS here: its package.json is not a module.
    await writeFile(path.join(project.fixturesDir, 'jest_plain', 'package.json'), '{ "private": true }\n');
    await rm(path.join(project.fixturesDir, 'jest_plain', 'src', 'calc.js'));

    const { byId } = await selfcheckProject(project);
    const verdicts = Object.fromEntries(
      Object.entries(byId).map(([id, r]) => [id, r.verdict === 'valid' ? 'valid' : `${r.verdict}: ${r.reason}`]),
    );
    expect(verdicts).toEqual({ uvu_hook: 'valid', ava_single: 'valid', mocha_hook: 'valid', tape_crash: 'valid', jest_plain: 'valid' });

    expect(byId.uvu_hook!.red).toMatchObject({ exitCode: 0, state: 'fail' });
    expect(byId.uvu_hook!.red!.problems).toContain('the report has failures but the command exited 0');
    expect(byId.uvu_hook!.red!.tests.map((t) => [t.id, t.status])).toEqual([['test/calc.test.js::db', 'error']]);
    expect(byId.uvu_hook!.green!.tests.map((t) => [t.id, t.status])).toEqual([['test/calc.test.js::db > reads', 'passed']]);

    expect(byId.ava_single!.observed).toEqual({ failToPass: ['test/calc.test.js::adds'], passToPass: ['test/calc.test.js::zero'] });
    expect(byId.mocha_hook!.red!.tests.map((t) => [t.id, t.status])).toEqual([
      ['test/calc.test.js::zero', 'passed'],
      ['test/calc.test.js::calc', 'error'],
    ]);
    // The test the hook stopped is missing from RED (so failing) and passes in GREEN.
    expect(byId.mocha_hook!.observed).toEqual({ failToPass: ['test/calc.test.js::calc > adds'], passToPass: ['test/calc.test.js::zero'] });
    // tape names no files in its TAP: the preloaded module puts each test's file in its name.
    expect(byId.tape_crash!.red!.tests.map((t) => [t.id, t.status])).toEqual([
      ['test/calc.test.js::zero', 'passed'],
      ['test/calc.test.js::adds', 'error'],
    ]);
    expect(byId.tape_crash!.observed).toEqual({ failToPass: ['test/calc.test.js::adds'], passToPass: ['test/calc.test.js::zero'] });
    expect(byId.jest_plain!.observed).toEqual({
      failToPass: ['test/calc.test.js::add > adds'],
      passToPass: ['test/calc.test.js::add > zero'],
    });
  }, 180_000);
});
