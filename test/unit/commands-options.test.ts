import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { parseOptions, selfcheckOptionsSchema, ShardSchema } from '../../harness/commands/options.js';
import { projectConfig, resolveOptions } from '../../harness/commands/resolve-options.js';
import { ReporterSpecSchema } from '../../harness/commands/reporter-spec.js';
import { findConfig } from '../../harness/config/file.js';
import { useTempDirs } from '../helpers/temp-dirs.js';

const tempDir = useTempDirs('rg-options-');
const cwd = process.cwd();
afterEach(() => process.chdir(cwd));

describe('options: one schema for the CLI, the API and config files', () => {
  test('a bad or unknown option is named in the words of where it came from', () => {
    const schema = selfcheckOptionsSchema();
    expect(() => parseOptions(schema, { concurency: '2' }, 'cli')).toThrow(/--concurency: unknown option \(did you mean --concurrency\?\)/);
    expect(() => parseOptions(schema, { concurency: 2 }, 'api')).toThrow(
      /option "concurency": unknown option \(did you mean "concurrency"\?\)/,
    );
    expect(() => parseOptions(schema, { concurrency: '0' }, 'cli')).toThrow(
      /--concurrency: must be a whole number from 1 to 1024, got "0"/,
    );
    expect(() => parseOptions(schema, { concurrency: 0 }, 'cli', { concurrency: 'redgreen.config.json: "concurrency"' })).toThrow(
      /redgreen\.config\.json: "concurrency": must be a whole number/,
    );
    expect(() => parseOptions(schema, { backend: 'nope' }, 'api')).toThrow(
      /option "backend": unknown backend "nope": one of local, bwrap, docker, podman, e2b, auto/,
    );
    expect(parseOptions(schema, { concurrency: '3', ids: ['bug0*'] }, 'cli')).toMatchObject({
      concurrency: 3,
      ids: ['bug0*'],
      write: false,
    });
  });

  test('--shard i/n and --reporter name[=file] are checked where they are given', () => {
    expect(ShardSchema.parse('2/3')).toEqual({ index: 2, count: 3 });
    for (const bad of ['0/2', '3/2', '1/0', 'a/b', '1']) expect(ShardSchema.safeParse(bad).success, bad).toBe(false);
    expect(ReporterSpecSchema.parse('junit=out/j.xml')).toEqual({ name: 'junit', file: 'out/j.xml' });
    expect(ReporterSpecSchema.parse('github')).toEqual({ name: 'github' });
    const schema = selfcheckOptionsSchema();
    expect(() => parseOptions(schema, { reporter: ['tap'] }, 'cli')).toThrow(/--reporter: unknown reporter "tap": one of default, json/);
    expect(() => parseOptions(schema, { reporter: ['json=x.json'] }, 'cli')).toThrow(/--reporter: only junit, md, html write a file/);
    expect(() => parseOptions(schema, { shard: '3/2' }, 'cli')).toThrow(/--shard: must be i\/n with 1 ≤ i ≤ n/);
    const custom = { onEnd: () => undefined };
    expect(ReporterSpecSchema.parse(custom)).toBe(custom);
  });
});

describe('config files', () => {
  test('the nearest redgreen.config.* up from the working folder; paths are taken from its folder; flags win', async () => {
    const root = await tempDir();
    await mkdir(path.join(root, 'a/b'), { recursive: true });
    await writeFile(
      path.join(root, 'redgreen.config.json'),
      JSON.stringify({ concurrency: 3, fixtures: 'suite/fixtures', reporter: ['junit', 'md=out/summary.md'] }),
    );
    process.chdir(path.join(root, 'a/b'));
    expect(findConfig('.')).toBe(path.join(root, 'redgreen.config.json'));
    const o = await resolveOptions(selfcheckOptionsSchema, { ids: [], repeat: '2' }, 'cli');
    expect(o).toMatchObject({
      concurrency: 3,
      repeat: 2,
      root,
      fixtures: path.join(root, 'suite/fixtures'),
      // A reporter's file is a path too: from the config's folder, not from where redgreen runs.
      reporter: [{ name: 'junit' }, { name: 'md', file: path.join(root, 'out/summary.md') }],
    });
    // One typed on the command line is the user's own, from where they are.
    expect((await resolveOptions(selfcheckOptionsSchema, { reporter: ['md=here.md'] }, 'cli')).reporter).toEqual([
      { name: 'md', file: 'here.md' },
    ]);
    expect((await resolveOptions(selfcheckOptionsSchema, { concurrency: '1' }, 'cli')).concurrency).toBe(1);
    // config: false (API) ignores it; --config names another.
    expect((await resolveOptions(selfcheckOptionsSchema, { config: false }, 'api')).concurrency).not.toBe(3);
    await writeFile(path.join(root, 'other.json'), JSON.stringify({ concurrency: 5 }));
    expect((await resolveOptions(selfcheckOptionsSchema, { config: path.join(root, 'other.json') }, 'cli')).concurrency).toBe(5);
  });

  test('.mjs and .ts configs load (defineConfig), a bad one names its file and key, JSON errors have line:column', async () => {
    const root = await tempDir();
    process.chdir(root);
    await writeFile('redgreen.config.mjs', 'export default { concurrency: 4, passEnv: ["HOME"] };\n');
    expect((await projectConfig(undefined)).values).toMatchObject({ concurrency: 4, passEnv: ['HOME'], root });
    await writeFile(
      'typed.ts',
      'const n: number = 6;\nexport default { concurrency: n, agentTimeout: 60 } satisfies Record<string, unknown>;\n',
    );
    expect((await projectConfig('typed.ts')).values).toMatchObject({ concurrency: 6, agentTimeout: 60 });
    await writeFile('bad.json', '{\n  "concurrency": 2,\n  "backnd": "docker"\n}\n');
    await expect(projectConfig('bad.json')).rejects.toThrow(/bad\.json: unknown option "backnd"/);
    await writeFile('broken.json', '{\n  "concurrency": 2,\n}\n');
    await expect(projectConfig('broken.json')).rejects.toThrow(/broken\.json: not valid JSON \(.* at line 3, column 1\)/);
    await expect(projectConfig('missing.json')).rejects.toThrow(/config file missing\.json does not exist/);
    await writeFile('resume.json', JSON.stringify({ resume: 'x' }));
    await expect(projectConfig('resume.json')).rejects.toMatchObject({ code: 'CONFIG_INVALID', exitCode: 2 });
  });
});

describe('reporters chosen', () => {
  test('--json prints the JSON even when a config chose other reporters; a chosen list replaces the defaults', async () => {
    const { makeReporters } = await import('../../harness/commands/reporters.js');
    const { report } = await import('../helpers/reports.js');
    // Never a device path here: a file reporter must write /dev/null in place, but a test does not bet the machine on it.
    const sink = path.join(await tempDir(), 'summary.md');
    const printed: string[] = [];
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((s) => (printed.push(String(s)), true));
    try {
      const rep = report('r1', { a: { verdict: 'valid' } });
      const end = { run: {} as never, report: rep, reportPath: '/nowhere/report.json', transcriptDir: '/nowhere', exitCode: 0 };
      for (const r of makeReporters([{ name: 'md', file: sink }], { cli: true, json: true })) await r.onEnd?.([end]);
      expect(JSON.parse(printed.join('')).runId).toBe('r1');
      printed.length = 0;
      for (const r of makeReporters([{ name: 'md', file: sink }], { cli: true, json: false })) await r.onEnd?.([end]);
      expect(printed).toEqual([]);
      // With the table, a file the user named is said where it went, after report.json and the transcript.
      for (const r of makeReporters([{ name: 'default' }, { name: 'md', file: sink }], { cli: true, json: false })) await r.onEnd?.([end]);
      expect(printed.join('')).toMatch(new RegExp(`report: /nowhere/report.json\ntranscript: /nowhere\nmd: ${sink}\n$`));
    } finally {
      spy.mockRestore();
    }
  });
});
