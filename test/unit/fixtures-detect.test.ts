import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { detectProject, isTestFile, type Detected, type Detection } from '../../harness/fixtures/detect.js';
import { runnerOfCommand } from '../../harness/fixtures/detect-node.js';
import { useTempDirs } from '../helpers/temp-dirs.js';

const tempDir = useTempDirs('rg-detect-');

/** A project folder with these files (a string is the content; objects are written as JSON). */
async function project(files: Record<string, string | object>): Promise<string> {
  const dir = await tempDir();
  for (const [rel, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
    await writeFile(path.join(dir, rel), typeof content === 'string' ? content : JSON.stringify(content));
  }
  return dir;
}

function detected(d: Detection): Detected {
  if (!d.detected) throw new Error(`not detected: ${d.reasons.join('; ')}`);
  return d;
}

describe('detectProject: JavaScript', () => {
  test('the test script names the runner; the lockfile picks the install; the reasons say so', async () => {
    const dir = await project({
      'package.json': { scripts: { test: 'jest --coverage' }, devDependencies: { jest: '29.7.0' } },
      'package-lock.json': '{}',
    });
    expect(await detectProject(dir)).toEqual({
      detected: true,
      runner: 'jest',
      language: 'javascript',
      command: 'npx jest --coverage',
      env: {},
      setup: { commands: ['npm ci --no-audit --no-fund'], network: true },
      testFiles: ['**/__tests__/**/*.[jt]s?(x)', '**/*.{test,spec}.[jt]s?(x)'],
      reasons: ['scripts.test is `jest --coverage`, which runs `jest`; package.json has jest 29.7.0', 'package-lock.json: npm ci'],
      looked: ['package.json'],
    });
  });

  test.each([
    ['vitest', 'vitest', 'npx vitest run'],
    ['vitest --watch', 'vitest', 'npx vitest run'],
    ['vitest run --project unit', 'vitest', 'npx vitest run --project unit'],
    ['NODE_ENV=test mocha --reporter dot test/**/*.spec.js', 'mocha', 'NODE_ENV=test npx mocha test/**/*.spec.js'],
    ['nyc --reporter=lcov ava --verbose', 'ava', 'npx ava --verbose'],
    ['uvu tests -i fixtures', 'uvu', 'npx uvu tests -i fixtures'],
    ['tape test/*.js | tap-spec', 'tap', 'npx tape test/*.js'],
    ['tap', 'tap', 'npx tap --reporter=tap'],
    ['node --test test/', 'node-test', 'node --test test/'],
    ['cross-env CI=1 jest --watchAll', 'jest', 'CI=1 npx jest'],
  ])('`%s` runs %s as `%s`', (script, runner, command) => {
    expect(runnerOfCommand(script)).toMatchObject({ runner, command });
  });

  test('NODE_OPTIONS the script sets goes to env, where the adapters that preload a module add theirs', async () => {
    const d = detected(
      await detectProject(
        await project({
          'package.json': {
            scripts: { test: "cross-env NODE_OPTIONS='--no-warnings' TZ=UTC uvu tests" },
            devDependencies: { uvu: '0.5.6' },
          },
        }),
      ),
    );
    expect([d.command, d.env]).toEqual(['TZ=UTC npx uvu tests', { NODE_OPTIONS: '--no-warnings' }]);
  });

  test('a test script that runs other scripts by name is followed to the runner', async () => {
    const scripts = { test: 'run-s lint test:*', lint: 'eslint .', 'test:unit': 'npm run build && mocha dist' };
    const named = detected(
      await detectProject(await project({ 'package.json': { scripts: { ...scripts, test: 'run-s lint test:unit' } } })),
    );
    expect([named.runner, named.command]).toEqual(['mocha', 'npm run test:unit']);
    expect(named.reasons[0]).toBe(
      'scripts.test is `run-s lint test:unit` (through scripts.test:unit: `npm run build && mocha dist`), which runs `mocha`',
    );
  });

  test('a build step before the runner stays: npm test runs it, and the options go to the runner at the end', async () => {
    const d = detected(
      await detectProject(await project({ 'package.json': { scripts: { test: 'tsc -p . && mocha dist/test' } }, 'tsconfig.json': '{}' })),
    );
    expect([d.runner, d.command, d.language]).toEqual(['mocha', 'npm test', 'typescript']);
    // No dependencies: nothing to install.
    expect(d.setup).toEqual({ commands: [], network: false });
  });

  test('a runner that is not last in the script runs alone, and the reasons say what was left out', async () => {
    const d = detected(
      await detectProject(await project({ 'package.json': { scripts: { test: 'jest && eslint .' }, devDependencies: { jest: '^29' } } })),
    );
    expect(d.command).toBe('npx jest');
    expect(d.reasons).toContain('only `jest` of it is run');
  });

  test('without a test script: a runner config, then a package.json section, then a dependency', async () => {
    const config = detected(await detectProject(await project({ 'package.json': {}, 'vitest.config.ts': 'export default {}' })));
    expect([config.runner, config.command, config.reasons[0]]).toEqual(['vitest', 'npx vitest run', 'vitest.config.ts configures vitest']);
    const section = detected(await detectProject(await project({ 'package.json': { ava: { files: ['t/**'] } } })));
    expect([section.runner, section.reasons[0]]).toEqual(['ava', 'package.json has a "ava" section']);
    const dep = detected(await detectProject(await project({ 'package.json': { devDependencies: { tape: '5.x' } }, 'yarn.lock': '' })));
    expect([dep.runner, dep.command, dep.setup.commands]).toEqual([
      'tap',
      "npx tape 'test/**/*.js'",
      ['npx --yes yarn@1 install --frozen-lockfile'],
    ]);
  });

  test('a test script with no runner redgreen knows is graded by its exit code', async () => {
    const d = detected(await detectProject(await project({ 'package.json': { scripts: { test: 'make check' } } })));
    expect([d.runner, d.command]).toEqual(['exit-code', 'npm test']);
  });

  test("npm's placeholder test script is no test", async () => {
    const d = await detectProject(await project({ 'package.json': { scripts: { test: 'echo "Error: no test specified" && exit 1' } } }));
    expect(d).toEqual({ detected: false, reasons: ['no test runner configuration found'], looked: ['package.json'] });
  });

  test('a package.json that is not JSON is named in the reasons, and the other ecosystems are still read', async () => {
    const d = detected(await detectProject(await project({ 'package.json': '{ nope', 'go.mod': 'module example.com/x\n\ngo 1.21\n' })));
    expect(d.runner).toBe('go');
    expect(d.reasons).toContainEqual(expect.stringMatching(/^package\.json is not valid: /));
  });
});

describe('detectProject: Python', () => {
  test('pyproject.toml configures pytest; the project and its test extra are installed', async () => {
    const d = detected(
      await detectProject(
        await project({
          'pyproject.toml':
            '[build-system]\nrequires = ["setuptools"]\n\n[project]\nname = "x"\n\n[project.optional-dependencies]\ntest = ["pytest>=7"]\n\n[tool.pytest.ini_options]\naddopts = "-q"\n',
          'tests/test_x.py': 'def test_x():\n    pass\n',
        }),
      ),
    );
    expect(d).toMatchObject({
      runner: 'pytest',
      language: 'python',
      command: 'python3 -m pytest -q',
      setup: { commands: ['python3 -m pip install -e .[test]'], network: true },
    });
    expect(d.reasons[0]).toBe('pyproject.toml has [tool.pytest.ini_options]');
    expect(isTestFile('tests/test_x.py', d)).toBe(true);
    expect(isTestFile('src/x.py', d)).toBe(false);
  });

  test('setup.cfg, tox.ini and requirements files say pytest too', async () => {
    const cfg = detected(await detectProject(await project({ 'setup.cfg': '[metadata]\nname = x\n\n[tool:pytest]\ntestpaths = tests\n' })));
    expect(cfg.reasons[0]).toBe('setup.cfg has [tool:pytest]');
    const tox = detected(await detectProject(await project({ 'tox.ini': '[testenv]\ncommands = pytest {posargs}\n' })));
    expect(tox.reasons[0]).toBe('tox.ini runs pytest in its commands');
    const reqs = detected(
      await detectProject(await project({ 'requirements-dev.txt': 'pytest==8.0\n', 'test_a.py': 'def test_a(): pass\n' })),
    );
    expect([reqs.runner, reqs.reasons[0], reqs.setup.commands]).toEqual([
      'pytest',
      'requirements-dev.txt requires pytest',
      ['python3 -m pip install -r requirements-dev.txt'],
    ]);
  });

  test('tests written for unittest, and nothing that configures pytest: unittest -v', async () => {
    const d = detected(
      await detectProject(await project({ 'setup.py': 'from setuptools import setup\nsetup()\n', 'tests/test_a.py': 'import unittest\n' })),
    );
    expect([d.runner, d.command, d.setup.commands]).toEqual(['unittest', 'python3 -m unittest -v', ['python3 -m pip install -e .']]);
    expect(d.reasons[0]).toBe('test files (tests/test_a.py) use unittest and nothing configures pytest');
  });
});

describe('detectProject: Go, Rust, several, none', () => {
  test('go.mod: go test, and go mod download when it requires modules', async () => {
    const d = detected(
      await detectProject(
        await project({
          'go.mod': 'module example.com/shop\n\ngo 1.22\n\nrequire github.com/x/y v1.0.0\n',
          'shop_test.go': 'package shop\n',
        }),
      ),
    );
    expect(d).toMatchObject({ runner: 'go', command: 'go test ./...', setup: { commands: ['go mod download'], network: true } });
    expect(d.reasons[0]).toBe('go.mod declares module example.com/shop (go 1.22)');
    expect(isTestFile('internal/cart/cart_test.go', d)).toBe(true);
  });

  test('Cargo.toml: cargo test offline after cargo fetch; a workspace tests every member', async () => {
    const d = detected(
      await detectProject(await project({ 'Cargo.toml': '[package]\nname = "calc"\nversion = "0.1.0"\n\n[dependencies]\nserde = "1"\n' })),
    );
    expect(d).toMatchObject({ runner: 'cargo', command: 'cargo test --offline', setup: { commands: ['cargo fetch'], network: true } });
    const ws = detected(await detectProject(await project({ 'Cargo.toml': '[workspace]\nmembers = ["a"]\n' })));
    expect([ws.command, ws.setup.commands]).toEqual(['cargo test --workspace --offline', []]);
  });

  test('an explicit test setup wins over an implied one, and the other is named', async () => {
    const d = detected(
      await detectProject(
        await project({
          'package.json': { devDependencies: { mocha: '10' } },
          'pytest.ini': '[pytest]\n',
          'test_a.py': 'def test_a(): pass\n',
        }),
      ),
    );
    expect(d.runner).toBe('pytest');
    expect(d.reasons.at(-1)).toBe('also found: mocha (npx mocha) — package.json dependencies have mocha 10');
  });

  test('nothing to go by: not detected, with what was looked at', async () => {
    const d = await detectProject(await project({ 'README.md': '# hi\n', 'setup.cfg': '[metadata]\nname = x\n' }));
    expect(d).toEqual({
      detected: false,
      reasons: ['found setup.cfg but no pytest configuration and no test_*.py files'],
      looked: ['setup.cfg'],
    });
  });

  test('a folder that does not exist is a usage error', async () => {
    await expect(detectProject('/no/such/folder')).rejects.toMatchObject({ code: 'USAGE' });
  });
});

describe('isTestFile', () => {
  test("by the runner's conventions", async () => {
    const d = detected(await detectProject(await project({ 'package.json': { scripts: { test: 'vitest' } } })));
    expect(['src/a.test.ts', 'src/a.spec.tsx', 'src/a.ts', 'test/helpers.ts'].map((f) => isTestFile(f, d))).toEqual([
      true,
      true,
      false,
      false,
    ]);
  });
});
