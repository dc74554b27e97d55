import os from 'node:os';
import path from 'node:path';
import { oracleProvider } from '../agents/static.js';
import { resolvePaths } from '../config/paths.js';
import { discoverFixtures, type Fixture } from '../fixtures/load.js';
import { fingerprintFixture } from '../fixtures/fingerprint.js';
import { runFixture } from '../pipeline/fixture-run.js';
import { BwrapBackend } from '../sandbox/bwrap/backend.js';
import { DockerBackend } from '../sandbox/docker/backend.js';
import { LocalBackend } from '../sandbox/host/local.js';
import { runFixtures } from '../pipeline/scheduler.js';
import type { SandboxBackend } from '../sandbox/core/types.js';
import { bareWork } from './bare.js';
import { benchE2B } from './e2b.js';
import { benchReports } from './reports.js';
import { benchInterrupt } from './interrupt.js';
import { benchStartup } from './startup.js';
import { machineLine } from './machine.js';
import { benchBigTrees } from './big-tree.js';
import { benchTrivial } from './trivial.js';
import { benchModels } from './models.js';
import { renderGrid } from '../reporters/grid.js';
import { median, ms, p95, timeIt } from './stats.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const MICRO = Number(process.env.BENCH_MICRO ?? 50);

/** create + upload + destroy of a small fixture, and exec of `true`, many times. */
async function sandboxMicro(backend: SandboxBackend, fixture: Fixture): Promise<void> {
  const t = { create: [] as number[], upload: [] as number[], exec: [] as number[], destroy: [] as number[] };
  for (let i = 0; i < MICRO; i++) {
    let sb: Awaited<ReturnType<SandboxBackend['create']>> | undefined;
    t.create.push(await timeIt(async () => (sb = await backend.create({ runId: 'bench', fixtureId: fixture.id }))));
    t.upload.push(await timeIt(() => sb!.uploadDir(fixture.treeDir, { skip: fixture.treeSkip })));
    t.exec.push(await timeIt(() => sb!.exec(['true'])));
    t.destroy.push(await timeIt(() => sb!.destroy()));
  }
  const sum = (...xs: number[][]) => xs[0]!.map((_, i) => xs.reduce((a, x) => a + x[i]!, 0));
  const line = (label: string, xs: number[]) =>
    console.log(`  ${label.padEnd(28)}  median ${ms(median(xs)).padStart(9)}   p95 ${ms(p95(xs)).padStart(9)}`);
  console.log(`\n${backend.name} sandbox (${MICRO} rounds, fixture ${fixture.id})`);
  line('create', t.create);
  line('upload', t.upload);
  line('exec true', t.exec);
  line('destroy', t.destroy);
  line('create + destroy', sum(t.create, t.destroy));
  line('create + upload + destroy', sum(t.create, t.upload, t.destroy));
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
  const table: string[][] = [];
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
  console.log(renderGrid(['fixture', 'bare work', 'harness', 'ratio'], table));
  console.log(`overhead ratio: ${(sumHarness / sumBare).toFixed(3)}× the bare work (target ≤ 1.15×)`);
  console.log('\nper-phase medians of the harness run, summed over fixtures:');
  console.log(`  ${[...phases].map(([p, v]) => `${p} ${ms(median(v) * fixtures.length)}`).join('   ')}`);
}

/** Hand-out time from a warm pool of docker containers (target < 20 ms). */
async function dockerPool(): Promise<void> {
  const pooled = new DockerBackend({ runId: 'bench-pool', pool: 4 });
  if (
    !(await pooled.probe().then(
      () => true,
      () => false,
    ))
  )
    return;
  try {
    await pooled.open('bench-pool');
    const times: number[] = [];
    for (let i = 0; i < 8; i++) {
      // Give the pool time to refill between hand-outs, as fixtures' own work would.
      await new Promise((r) => setTimeout(r, 600));
      let sb: Awaited<ReturnType<SandboxBackend['create']>> | undefined;
      times.push(await timeIt(async () => (sb = await pooled.create({ runId: 'bench-pool', fixtureId: 'pool' }))));
      await sb!.destroy();
    }
    console.log(`\ndocker warm pool hand-out (8 rounds): median ${ms(median(times))}   p95 ${ms(p95(times))}   (target < 20 ms)`);
  } finally {
    await pooled.close();
  }
}

/** A whole selfcheck (default concurrency) on each backend, beside the local one. */
async function selfcheckPerBackend(backends: SandboxBackend[], fixtures: Fixture[]): Promise<void> {
  console.log('\nwhole selfcheck per backend (all fixtures, concurrency = CPU count)');
  let localMs = 0;
  for (const backend of backends) {
    const t0 = performance.now();
    const { results } = await runFixtures({
      mode: 'selfcheck',
      provider: oracleProvider,
      fixtures,
      broken: [],
      backend,
      runId: 'bench',
      concurrency: os.availableParallelism(),
      repeat: 1,
      signal: new AbortController().signal,
      observer: {},
    });
    const took = performance.now() - t0;
    if (backend.name === 'local') localMs = took;
    const bad = results.filter((r) => r.verdict !== 'valid').map((r) => `${r.fixtureId}=${r.verdict}`);
    console.log(
      `  ${backend.name.padEnd(8)} ${ms(took).padStart(12)}   ${localMs ? `${(took / localMs).toFixed(2)}× local` : ''}${bad.length ? `   NOT VALID: ${bad.join(', ')}` : ''}`,
    );
  }
}

const TRIVIAL = Number(process.env.BENCH_TRIVIAL ?? 1000);
const BIG_FILES = Number(process.env.BENCH_BIG_FILES ?? 30_000);

async function main(): Promise<void> {
  const paths = resolvePaths({ root: path.resolve(process.env.BENCH_ROOT ?? '.') });
  const { fixtures } = await discoverFixtures(paths, process.argv.slice(2));
  const load = () =>
    os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(' ');
  console.log(
    `redgreen bench — node ${process.version}, ${os.cpus().length} cpus, ${fixtures.length} fixtures, load ${load()} (1, 5, 15 min)`,
  );
  console.log(machineLine());
  const local = new LocalBackend({ cacheDir: paths.cacheDir });
  const small = fixtures.find((f) => f.id === 'bug02_off_by_one') ?? fixtures[0]!;
  benchStartup(small.id);
  // Before the benches that run in this process grow its heap: e2b's harness is this process, and
  // its CPU per sandbox should be the backend's, not the collection of what the others left
  // (last, it read about 1 ms more a sandbox, 8.2 against 7.0 ms run alone).
  if (process.env.BENCH_E2B !== '0') await benchE2B(small);
  const others: SandboxBackend[] = [];
  const bwrap = new BwrapBackend({ cacheDir: paths.cacheDir });
  if (
    await bwrap.probe().then(
      () => true,
      (e: Error) => (console.log(`\nbwrap: skipped (${e.message})`), false),
    )
  )
    others.push(bwrap);
  const docker = new DockerBackend({ runId: 'bench' });
  if (
    await docker.probe().then(
      () => true,
      (e: Error) => (console.log(`docker: skipped (${e.message})`), false),
    )
  ) {
    await docker.open('bench');
    others.push(docker);
  }
  const harnessBackends = [
    { name: 'local' },
    ...others.map((b) => ({ name: b.name, ...(b.name === 'docker' ? { extra: ['--pool', '4'] } : {}) })),
  ];
  // Opened as a run opens them (folders and servers reused), closed at the end (their servers ended).
  await local.open();
  if (others.includes(bwrap)) await bwrap.open();
  if (TRIVIAL > 0) await benchTrivial(TRIVIAL, harnessBackends);
  // Without the trivial run's --pool: the big trees show ready without it, then with their own (big-tree.ts).
  if (BIG_FILES > 0)
    await benchBigTrees(
      harnessBackends.map(({ name }) => ({ name })),
      { files: BIG_FILES, bytes: 10_000 },
    );
  await benchModels(4, 20);
  await sandboxMicro(local, small);
  for (const b of others) await sandboxMicro(b, small);
  await overhead(local, fixtures);
  await selfcheckPerBackend([local, ...others], fixtures);
  await dockerPool();
  await Promise.all([local.close(), bwrap.close(), docker.close()]);
  console.log(`\npeak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`);
  await benchReports();
  await benchInterrupt();
  console.log(`\nload ${load()} at the end`);
}

await main();
