import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { z } from 'zod';
import {
  countTests,
  defineBackend,
  registerBackend,
  registerRunner,
  run,
  selfcheck,
  type ProgressEvent,
  type RunnerAdapter,
} from '../../harness/api/index.js';
import { diffTrees, scaffoldFixture } from '../../harness/fixtures/scaffold.js';
import { backendNamed } from '../../harness/sandbox/backends.js';
import { listenReady, pythonNotify } from '../helpers/ready-socket.js';
import { processesWith, uniqueSleep } from '../helpers/procs.js';
import { useTempDirs } from '../helpers/temp-dirs.js';

const tempDir = useTempDirs('rg-api-');
afterEach(() => vi.restoreAllMocks());

/** A runner from user code: its tests print `ok <name>` or `not ok <name>`, TAP-like. */
const linesAdapter: RunnerAdapter = {
  runner: 'lines' as RunnerAdapter['runner'],
  infrastructure: ['check.sh'],
  tools: ['sh'],
  prepare: (ctx) => ({ command: ctx.command, env: ctx.env }),
  parse(input) {
    const tests = [...input.stdout.matchAll(/^(not )?ok (\S+)$/gm)].map((m) => ({
      id: m[2]!,
      status: m[1] ? ('failed' as const) : ('passed' as const),
    }));
    return { source: 'stdout', tests, counts: countTests(tests) };
  },
};

describe('the public API', () => {
  test('selfcheck returns the report, prints nothing, touches no process-wide handler, and reports progress as events', async () => {
    const root = await tempDir();
    await scaffoldFixture({
      id: 'quick',
      runner: 'exit-code',
      fixturesDir: path.join(root, 'fixtures'),
      oraclesDir: path.join(root, 'oracles'),
    });
    const stdout = vi.spyOn(process.stdout, 'write');
    const stderr = vi.spyOn(process.stderr, 'write');
    const sigint = process.listenerCount('SIGINT');
    const events: ProgressEvent[] = [];
    const pending = selfcheck({ root, concurrency: 1, onProgress: (e) => events.push(e) });
    await new Promise((r) => setTimeout(r, 0));
    expect(process.listenerCount('SIGINT')).toBe(sigint);
    const report = await pending;
    expect(report.fixtures.map((f) => [f.fixtureId, f.verdict])).toEqual([['quick', 'valid']]);
    expect(stdout).not.toHaveBeenCalled();
    expect(stderr).not.toHaveBeenCalled();
    const types = events.map((e) => e.type);
    expect(types[0]).toBe('run-start');
    expect(types.at(-1)).toBe('run-end');
    expect(events.filter((e) => e.type === 'fixture-event' && e.event.type === 'phase').length).toBeGreaterThan(4);
    // Bad options are refused in the API's words.
    await expect(selfcheck({ root, concurrency: 0 })).rejects.toThrow(/option "concurrency": must be a whole number/);
    await expect(selfcheck({ root, ...({ concurency: 2 } as object) })).rejects.toThrow(
      /option "concurency": unknown option \(did you mean "concurrency"\?\)/,
    );
  });

  test('aborting the signal stops the run as Ctrl-C does: every sandbox process is gone, the report says interrupted', async () => {
    const root = await tempDir();
    const dirs = { fixturesDir: path.join(root, 'fixtures'), oraclesDir: path.join(root, 'oracles') };
    await scaffoldFixture({ id: 'hang', runner: 'pytest', ...dirs });
    const t = uniqueSleep();
    const sock = path.join(root, 'running.sock');
    await writeFile(
      path.join(root, 'fixtures/hang/test_calc.py'),
      `import subprocess\n\ndef test_hang():\n    p = subprocess.Popen(["sleep", "${t}"])\n${pythonNotify(sock)}    p.wait()\n`,
    );
    const ready = listenReady(sock);
    const controller = new AbortController();
    const pending = selfcheck({ root, signal: controller.signal });
    await ready.connected;
    ready.close();
    // The test notifies right after Popen returns; in this same process the notice can arrive
    // before /proc shows the child's new command line, so look until it does (bounded).
    for (const deadline = Date.now() + 10_000; !processesWith(t).length && Date.now() < deadline;)
      await new Promise((r) => setTimeout(r, 20));
    expect(processesWith(t)).not.toEqual([]);
    controller.abort();
    const report = await pending;
    expect(report.interrupted).toBe(true);
    expect(report.unfinished).toEqual(['hang']);
    expect(processesWith(t)).toEqual([]);
  });

  test('a runner and a backend registered from user code: manifests may name the runner, runs may use the backend', async () => {
    registerRunner(linesAdapter);
    expect(() => registerRunner({ ...linesAdapter })).toThrow(/a runner "lines" is already registered/);
    expect(() => registerRunner({ ...linesAdapter, runner: 'pytest' })).toThrow(/already registered/);
    const created: string[] = [];
    registerBackend(
      defineBackend({
        name: 'counted',
        summary: 'the local backend, counting its sandboxes',
        isolating: false,
        remote: false,
        options: z.object({ countLabel: z.string().default('none') }),
        flags: [],
        async create(options, ctx) {
          const local = await backendNamed('local').create({}, ctx);
          return {
            name: 'counted',
            create: (spec) => (created.push(`${options.countLabel}:${spec.fixtureId}`), local.create(spec)),
            open: (id) => local.open?.(id) ?? Promise.resolve(),
            close: () => local.close?.() ?? Promise.resolve(),
          };
        },
        probe: async () => ({ ok: true }),
      }),
    );
    const root = await tempDir();
    const dir = path.join(root, 'fixtures', 'custom');
    await mkdir(dir, { recursive: true });
    await mkdir(path.join(root, 'oracles'));
    const check = 'v=$(cat value.txt)\n[ "$v" = 2 ] && echo "ok value" || echo "not ok value"\necho "ok other"\n[ "$v" = 2 ]\n';
    await writeFile(path.join(dir, 'check.sh'), check);
    await writeFile(path.join(dir, 'value.txt'), '1\n');
    await writeFile(path.join(dir, 'ISSUE.md'), '# value is 1, should be 2\n');
    const manifest = (extra: object) =>
      writeFile(
        path.join(dir, 'fixture.json'),
        JSON.stringify({
          id: 'custom',
          title: 'custom runner',
          language: 'sh',
          runner: 'lines',
          test: { command: 'sh check.sh' },
          ...extra,
        }),
      );
    await manifest({ tags: ['custom'] });
    await writeFile(path.join(root, 'oracles', 'custom.patch'), await diffTrees({ 'value.txt': '1\n' }, { 'value.txt': '2\n' }));
    const report = await selfcheck<{ countLabel: string }>({ root, backend: 'counted', countLabel: 'api', tag: ['custom'] });
    expect(report.backend).toBe('counted');
    expect(report.fixtures.map((f) => [f.fixtureId, f.verdict, f.runner])).toEqual([['custom', 'valid', 'lines']]);
    expect(report.fixtures[0]!.observed).toEqual({ failToPass: ['value'], passToPass: ['other'] });
    expect(created).toEqual(['api:custom']);
    // run() grades the same way: the oracle as an agent resolves it once failToPass is declared.
    await manifest({ tests: { failToPass: ['value'], passToPass: ['other'] } });
    const [graded] = await run({ root, agent: 'oracle', backend: 'counted' });
    expect(graded!.fixtures.map((f) => f.verdict)).toEqual(['resolved']);
  });
});
