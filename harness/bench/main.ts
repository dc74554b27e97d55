import os from 'node:os';
import path from 'node:path';
import Table from 'cli-table3';
import { oracleProvider } from '../agents/static.js';
import { resolvePaths } from '../config/paths.js';
import { discoverFixtures, type Fixture } from '../fixtures/load.js';
import { fingerprintFixture } from '../fixtures/fingerprint.js';
import { runFixture } from '../pipeline/fixture-run.js';
import { FIXTURE_META_FILES } from '../pipeline/patch-phase.js';
import { LocalBackend } from '../sandbox/local.js';
import type { SandboxBackend } from '../sandbox/types.js';
import { bareWork } from './bare.js';
import { median, ms, p95, timeIt } from './stats.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const MICRO = Number(process.env.BENCH_MICRO ?? 50);

/** create + upload + destroy of a small fixture, and exec of `true`, many times. */
async function sandboxMicro(backend: SandboxBackend, fixture: Fixture): Promise<void> {
  const lifecycle: number[] = [];
  const create: number[] = [];
  const execTrue: number[] = [];
  for (let i = 0; i < MICRO; i++) {
    const t0 = performance.now();
    const sb = await backend.create({ runId: 'bench', fixtureId: fixture.id });
    create.push(performance.now() - t0);
    await sb.uploadDir(fixture.dir, { skip: FIXTURE_META_FILES });
    execTrue.push(await timeIt(() => sb.exec(['true'])));
    const t1 = performance.now();
    await sb.destroy();
    lifecycle.push(performance.now() - t0 - (performance.now() - t1 > 0 ? execTrue.at(-1)! : 0));
  }
  console.log(`\n${backend.name} sandbox (${MICRO} rounds, fixture ${fixture.id})`);
  console.log(`  create                        median ${ms(median(create))}   p95 ${ms(p95(create))}`);
  console.log(`  create + upload + destroy     median ${ms(median(lifecycle))}   p95 ${ms(p95(lifecycle))}   (target < 30 ms)`);
  console.log(`  exec true                     median ${ms(median(execTrue))}   p95 ${ms(p95(execTrue))}`);
}

/** The harness's selfcheck against the bare work, fixture by fixture, interleaved round by round. */
async function overhead(backend: SandboxBackend, fixtures: Fixture[]): Promise<void> {
  const harness = new Map<string, number[]>();
  const bare = new Map<string, number[]>();
  const phases = new Map<string, number[]>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const f of fixtures) {
      const b = await bareWork(f);
      (bare.get(f.id) ?? bare.set(f.id, []).get(f.id)!).push(Object.values(b).reduce((a, x) => a + x, 0));
      const t0 = performance.now();
      const r = await runFixture({
        mode: 'selfcheck',
        provider: oracleProvider,
        baseline: true,
        fixture: f,
        fixtureSha256: await fingerprintFixture(f),
        backend,
        runId: 'bench',
        repeat: 1,
        signal: new AbortController().signal,
        emit: () => undefined,
      });
      (harness.get(f.id) ?? harness.set(f.id, []).get(f.id)!).push(performance.now() - t0);
      if (r.verdict !== 'valid') throw new Error(`${f.id}: ${r.verdict} (${r.reason})`);
      for (const [p, v] of Object.entries(r.timings)) (phases.get(p) ?? phases.set(p, []).get(p)!).push(v);
    }
  }
  const table = new Table({ head: ['fixture', 'bare work', 'harness', 'ratio'], style: { head: [], border: [] } });
  let sumBare = 0;
  let sumHarness = 0;
  for (const f of fixtures) {
    const b = median(bare.get(f.id)!);
    const h = median(harness.get(f.id)!);
    sumBare += b;
    sumHarness += h;
    table.push([f.id, ms(b), ms(h), (h / b).toFixed(3)]);
  }
  table.push(['all (sum of medians)', ms(sumBare), ms(sumHarness), (sumHarness / sumBare).toFixed(3)]);
  console.log(`\nselfcheck vs bare work on ${backend.name} (median of ${ROUNDS} rounds, one fixture at a time)`);
  console.log(table.toString());
  console.log(`overhead ratio: ${(sumHarness / sumBare).toFixed(3)}× the bare work (target ≤ 1.15×)`);
  console.log('\nper-phase medians of the harness run, summed over fixtures:');
  console.log(`  ${[...phases].map(([p, v]) => `${p} ${ms(median(v) * fixtures.length)}`).join('   ')}`);
}

async function main(): Promise<void> {
  const paths = resolvePaths({ root: path.resolve(process.env.BENCH_ROOT ?? '.') });
  const { fixtures } = await discoverFixtures(paths, process.argv.slice(2));
  console.log(`redgreen bench — node ${process.version}, ${os.cpus().length} cpus, ${fixtures.length} fixtures`);
  const local = new LocalBackend({ cacheDir: paths.cacheDir });
  await sandboxMicro(local, fixtures.find((f) => f.id === 'bug02_off_by_one') ?? fixtures[0]!);
  await overhead(local, fixtures);
  console.log(`\npeak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`);
}

await main();
