import { spawn } from 'node:child_process';
import diagnostics from 'node:diagnostics_channel';
import { once, setMaxListeners } from 'node:events';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Sandbox as SdkSandbox } from 'e2b';
import { oracleProvider } from '../agents/static.js';
import { PACKAGE_ROOT } from '../config/paths.js';
import { discoverFixtures, type Fixture } from '../fixtures/load.js';
import { diffTrees } from '../fixtures/scaffold.js';
import { runFixtures } from '../pipeline/scheduler.js';
import { E2BBackend, type E2BBackendOptions } from '../sandbox/e2b/backend.js';
import { listLabelled, runLabels } from '../sandbox/e2b/gc.js';
import { machineBusyMs } from './measured.js';
import { median, ms, p95 } from './stats.js';

const MICRO = Number(process.env.BENCH_E2B_MICRO ?? 100);
const FIXTURES = Number(process.env.BENCH_E2B_FIXTURES ?? 200);
const CONCURRENCY = Number(process.env.BENCH_E2B_CONCURRENCY ?? 64);
const RATE = Number(process.env.BENCH_E2B_RATE ?? 50);

interface DoubleProcess {
  apiUrl: string;
  sandboxUrl: string;
  pid: number;
  stop(): Promise<void>;
}

/**
 * The E2B test double (test/helpers/e2b-server) in a process of its own, so the CPU measured here
 * is the harness's alone. It is TypeScript outside the build: transpiled on the fly (typescript is
 * a dev dependency, and the bench a development tool).
 */
async function startDouble(): Promise<DoubleProcess> {
  const ts = (await import('typescript')).default;
  const src = path.join(PACKAGE_ROOT, 'test', 'helpers', 'e2b-server');
  const out = await mkdtemp(path.join(os.tmpdir(), 'rg-bench-double-'));
  for (const f of (await readdir(src)).filter((n) => n.endsWith('.ts'))) {
    const js = ts.transpileModule(await readFile(path.join(src, f), 'utf8'), {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    });
    await writeFile(path.join(out, f.replace(/\.ts$/, '.js')), js.outputText);
  }
  await writeFile(path.join(out, 'package.json'), '{"type":"module"}');
  const child = spawn(process.execPath, [path.join(out, 'main.js')], { stdio: ['pipe', 'pipe', 'inherit'] });
  const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
  const urls = JSON.parse(line) as { apiUrl: string; sandboxUrl: string };
  return {
    ...urls,
    pid: child.pid!,
    stop: async () => {
      child.stdin!.end();
      if (child.exitCode === null) await once(child, 'exit');
      await rm(out, { recursive: true, force: true });
    },
  };
}

function cpuMs(since?: NodeJS.CpuUsage): number {
  const u = process.cpuUsage(since);
  return (u.user + u.system) / 1000;
}

/**
 * CPU of another process so far, in ms: its own (/proc/<pid>/stat utime + stime) and its waited-for
 * children's (cutime + cstime: the double's commands), from clock ticks of 10 ms.
 */
async function processCpuMs(pid: number): Promise<{ own: number; children: number }> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = (a: number, b: number) => (Number(f[a] ?? 0) + Number(f[b] ?? 0)) * 10;
  return { own: ticks(11, 12), children: ticks(13, 14) };
}

/** HTTP requests this process starts (node:http's, the backend's, and undici's, the SDK's), counted while `fn` runs. */
async function countRequests<T>(fn: () => Promise<T>): Promise<{ value: T; requests: number }> {
  let requests = 0;
  const count = () => void requests++;
  const channels = ['http.client.request.start', 'undici:request:create'];
  for (const c of channels) diagnostics.subscribe(c, count);
  try {
    return { value: await fn(), requests };
  } finally {
    for (const c of channels) diagnostics.unsubscribe(c, count);
  }
}

const loadavg = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');

/**
 * create → upload → exec → kill, one at a time: wall time, requests and the harness's CPU per
 * sandbox (the target: 8 ms). A template's first sandbox learns its root with one more
 * request; the rounds measure the ones after it. CPU is taken in batches, each followed by a batch
 * of the same requests made with the official SDK — create, one command as long as ours, kill:
 * what the backend cost when it was built on the SDK — so both see the same load from elsewhere.
 */
async function micro(options: E2BBackendOptions, fixture: Fixture, doublePid: number): Promise<void> {
  const backend = new E2BBackend(options);
  const conn = backend.connection;
  const lifecycle = async () => {
    const sb = await backend.create({ runId: 'bench-micro', fixtureId: fixture.id });
    await sb.uploadDir(fixture.treeDir, { skip: fixture.treeSkip });
    await sb.exec(['true']);
    await sb.destroy();
  };
  const bare = async () => {
    const sb = await SdkSandbox.create('bench', conn);
    await sb.commands.run(`true ${'x'.repeat(5000)}`);
    await sb.kill();
  };
  for (let i = 0; i < 50; i++) await Promise.all([lifecycle(), bare()]); // warm-up: JIT, connection pools
  const wall: number[] = [];
  const ours: number[] = [];
  const floor: number[] = [];
  const server: number[] = [];
  const requests = { ours: 0, floor: 0 };
  const perBatch = Math.max(1, Math.floor(MICRO / 5));
  const cpuOf = async (fn: () => Promise<void>, counted: 'ours' | 'floor') => {
    const { value, requests: n } = await countRequests(async () => {
      const cpu0 = process.cpuUsage();
      for (let i = 0; i < perBatch; i++) await fn();
      return cpuMs(cpu0) / perBatch;
    });
    requests[counted] += n;
    return value;
  };
  const load = loadavg();
  for (let b = 0; b < 5; b++) {
    const server0 = (await processCpuMs(doublePid)).own;
    ours.push(
      await cpuOf(async () => {
        const t0 = performance.now();
        await lifecycle();
        wall.push(performance.now() - t0);
      }, 'ours'),
    );
    server.push(((await processCpuMs(doublePid)).own - server0) / perBatch);
    floor.push(await cpuOf(bare, 'floor'));
  }
  await backend.close();
  const per = (n: number) => (n / (perBatch * 5)).toFixed(1);
  console.log(`\ne2b sandbox against the test double (${perBatch * 5} rounds, fixture ${fixture.id}: create → upload → exec → kill)`);
  console.log(`  load (1, 5, 15 min)           ${load} at the start, ${loadavg()} at the end, ${os.cpus().length} cpus`);
  console.log(`  wall                          median ${ms(median(wall))}   p95 ${ms(p95(wall))}`);
  console.log(`  requests per sandbox          ${per(requests.ours)}   (target ≤ 3: create, one command, kill)`);
  console.log(`  harness CPU per sandbox       median of 5 batches ${ms(median(ours))}   best ${ms(Math.min(...ours))}   (target ≤ 8 ms)`);
  console.log(
    `  the same ${per(requests.floor)} requests, official SDK median ${ms(median(floor))}   best ${ms(Math.min(...floor))}   (for comparison: the backend used it until the wire client)`,
  );
  console.log(`  test double's CPU per sandbox ${ms(median(server))}   (another process: not counted above)`);
}

/** N tiny fixtures (exit-code runner) in a temporary project: the pipeline's cost, not the tests'. */
async function syntheticProject(n: number): Promise<{ fixturesDir: string; oraclesDir: string; dir: string }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'rg-bench-e2b-'));
  const oracle = await diffTrees({ 'state.txt': 'broken\n' }, { 'state.txt': 'fixed\n' });
  await mkdir(path.join(dir, 'oracles'));
  for (let i = 0; i < n; i++) {
    const id = `fx${String(i).padStart(3, '0')}`;
    await mkdir(path.join(dir, 'fixtures', id), { recursive: true });
    const manifest = {
      id,
      title: id,
      language: 'shell',
      runner: 'exit-code',
      test: { command: 'grep -qx fixed state.txt', timeoutSec: 60 },
    };
    await writeFile(path.join(dir, 'fixtures', id, 'fixture.json'), JSON.stringify(manifest));
    await writeFile(path.join(dir, 'fixtures', id, 'ISSUE.md'), `# ${id}\n`);
    await writeFile(path.join(dir, 'fixtures', id, 'state.txt'), 'broken\n');
    await writeFile(path.join(dir, 'oracles', `${id}.patch`), oracle);
  }
  return { dir, fixturesDir: path.join(dir, 'fixtures'), oraclesDir: path.join(dir, 'oracles') };
}

/** FIXTURES fixtures through the whole pipeline at CONCURRENCY: memory, creation rate, slot waits, leaks. */
async function scale(options: E2BBackendOptions, doublePid: number): Promise<void> {
  const project = await syntheticProject(FIXTURES);
  const backend = new E2BBackend({ ...options, warm: 8, limits: { ratePerSec: RATE, burst: 16, maxInFlight: 16 } });
  const runId = `bench-scale-${process.pid}`;
  let peakRss = process.memoryUsage().rss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 25);
  const t0 = performance.now();
  try {
    // As the CLI opens a run: the pool makes no more sandboxes than the fixtures take.
    await backend.open(runId, { sandboxes: FIXTURES });
    const { fixtures, broken } = await discoverFixtures(project);
    const signal = new AbortController().signal;
    // Every running command listens to the run's signal: 64 of them are expected, not a leak.
    setMaxListeners(0, signal);
    const cpu0 = process.cpuUsage();
    const [double0, machine0] = [await processCpuMs(doublePid), await machineBusyMs()];
    const { value: outcome, requests } = await countRequests(async () => {
      const r = await runFixtures({
        mode: 'selfcheck',
        fixtures,
        broken,
        backend,
        runId,
        concurrency: CONCURRENCY,
        repeat: 1,
        provider: oracleProvider,
        signal,
        observer: {},
      });
      return { ...r, cpuMs: cpuMs(cpu0) };
    });
    const { results } = outcome;
    const wallS = (performance.now() - t0) / 1000;
    const double1 = await processCpuMs(doublePid);
    const doubleS = (double1.own - double0.own) / 1000;
    const commandsS = (double1.children - double0.children) / 1000;
    const machine1 = await machineBusyMs();
    const machineS = machine0 === null || machine1 === null ? null : (machine1 - machine0) / 1000;
    const verdicts = results.reduce<Record<string, number>>((a, r) => ((a[r.verdict] = (a[r.verdict] ?? 0) + 1), a), {});
    const slotWait = results.map((r) => r.spans[0]?.startMs ?? 0);
    const createMs = results.map((r) => r.timings.create ?? 0);
    await backend.close();
    const s = backend.stats();
    const leaked = await listLabelled(backend.connection, runLabels(runId));
    const anyLeft = await SdkSandbox.list({ ...backend.connection, limit: 100 }).nextItems();
    console.log(
      `\n${FIXTURES} fixtures at concurrency ${CONCURRENCY} through the full pipeline (creation limit ${RATE}/s, burst 16, 16 in flight, warm pool 8)`,
    );
    console.log(`  verdicts                      ${JSON.stringify(verdicts)}   in ${wallS.toFixed(1)} s`);
    console.log(
      `  creations                     ${s.created} (pool hand-overs ${s.poolHits}, retries ${s.retries}) = ${(s.created / wallS).toFixed(1)}/s`,
    );
    console.log(
      `  waiting for a worker slot     median ${ms(median(slotWait))}   max ${ms(Math.max(...slotWait))}   (the scheduler's queue)`,
    );
    console.log(
      `  waiting for a creation slot   total ${ms(s.limiter.waitMsTotal)}   mean ${ms(s.limiter.waitMsTotal / Math.max(1, s.limiter.granted))}   max ${ms(s.limiter.waitMsMax)}   (the rate limiter)`,
    );
    console.log(
      `  harness CPU per fixture       ${ms(outcome.cpuMs / FIXTURES)}   over ${(requests / FIXTURES).toFixed(1)} requests each, its creations, commands and kills (load ${loadavg()})`,
    );
    // What bounds the wall time here: the double and the commands it runs share this machine's cores with the harness.
    console.log(
      `  test double's CPU             ${doubleS.toFixed(1)} s its own + ${commandsS.toFixed(1)} s its commands'` +
        (machineS === null
          ? ''
          : `   machine busy ${machineS.toFixed(1)} s of ${(wallS * os.cpus().length).toFixed(1)} s (${os.cpus().length} cpus × the wall)`),
    );
    console.log(`  create phase                  median ${ms(median(createMs))}   p95 ${ms(p95(createMs))}`);
    console.log(`  peak RSS                      ${(peakRss / 1048576).toFixed(0)} MB   (target < 300 MB)`);
    console.log(`  leaked sandboxes              ${leaked.length} of this run, ${anyLeft.length} alive on the service   (target 0)`);
  } finally {
    clearInterval(sampler);
    await backend.close();
    await rm(project.dir, { recursive: true, force: true });
  }
}

/** The e2b part of `npm run bench`: the backend's own cost against the local test double. */
export async function benchE2B(fixture: Fixture): Promise<void> {
  const double = await startDouble();
  try {
    const options: E2BBackendOptions = {
      template: 'bench',
      apiKey: 'bench',
      apiUrl: double.apiUrl,
      sandboxUrl: double.sandboxUrl,
      limits: { ratePerSec: 1000, burst: 1000, maxInFlight: 64 },
    };
    await micro(options, fixture, double.pid);
    await scale(options, double.pid);
  } finally {
    await double.stop();
  }
}
