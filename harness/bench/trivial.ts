import { closeSync, openSync } from 'node:fs';
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { scaffoldFixture } from '../fixtures/scaffold.js';
import { harnessRun, measure, measureScript, type HarnessMeasured, type Measured } from './measured.js';
import { median } from './stats.js';

/** One fixture's bare work, as a user would script it: copy, RED, git apply, GREEN, remove. */
const BARE_SCRIPT = `root=$1; id=$2
d=$(mktemp -d "\${TMPDIR:-/tmp}/rg-bench-bare-XXXXXX")
cp -R "$root/fixtures/$id/." "$d" && cd "$d" && { sh check.sh; git apply "$root/oracles/$id.patch" && sh check.sh; }
cd /; rm -rf "$d"
`;

export interface TrivialSet {
  root: string;
  ids: string[];
}

/** N copies of `redgreen new --runner exit-code` (check.sh/add.sh) in a temp project. */
export async function makeTrivialFixtures(n: number): Promise<TrivialSet> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'rg-bench-trivial-'));
  const dirs = { fixturesDir: path.join(root, 'fixtures'), oraclesDir: path.join(root, 'oracles') };
  const ids = Array.from({ length: n }, (_, i) => `t${String(i).padStart(5, '0')}`);
  await scaffoldFixture({ id: ids[0]!, runner: 'exit-code', ...dirs });
  const manifest = await readFile(path.join(dirs.fixturesDir, ids[0]!, 'fixture.json'), 'utf8');
  const oracle = await readFile(path.join(dirs.oraclesDir, `${ids[0]}.patch`));
  for (const id of ids.slice(1)) {
    await cp(path.join(dirs.fixturesDir, ids[0]!), path.join(dirs.fixturesDir, id), { recursive: true });
    await writeFile(path.join(dirs.fixturesDir, id, 'fixture.json'), manifest.replaceAll(ids[0]!, id));
    await writeFile(path.join(dirs.oraclesDir, `${id}.patch`), oracle);
  }
  await writeFile(path.join(root, 'bare.sh'), BARE_SCRIPT);
  return { root, ids };
}

/** The bare work for every fixture, two at a time (`xargs -P 2`). */
export function bareTrivial(set: TrivialSet, parallel: number): Promise<Measured> {
  return measure(`ls fixtures | xargs -P ${parallel} -n 1 sh bare.sh "$PWD"`, set.root);
}

const FLOOR = fileURLToPath(new URL('./floor-harness.js', import.meta.url));

/** The least a Node.js harness does itself for the same fixtures (floor-harness.ts), measured the same way. */
export function floorTrivial(set: TrivialSet, parallel: number): Promise<HarnessMeasured> {
  return measureScript(FLOOR, [set.root, String(parallel)], set.root);
}

export interface TrivialMeasured extends HarnessMeasured {
  verdicts: Record<string, number>;
}

/** `redgreen selfcheck -j <parallel> --backend <name>` over the set, as a user runs it. */
export async function harnessTrivial(
  set: TrivialSet,
  backend: string,
  parallel: number,
  extra: string[] = [],
  /** Another build's dist/cli-program.js to measure instead of this one's. */
  program?: string,
): Promise<TrivialMeasured> {
  const reports = path.join(set.root, `reports-${backend}`);
  const args = [
    'selfcheck',
    '-j',
    String(parallel),
    '--backend',
    backend,
    '--reports',
    reports,
    '--transcripts',
    path.join(set.root, `transcripts-${backend}`),
    ...extra,
  ];
  const m = await harnessRun(set.root, args, {}, program);
  const verdicts: Record<string, number> = {};
  const report = await readFile(path.join(await latestRun(reports), 'report.json'), 'utf8').then(
    (t) => JSON.parse(t) as { fixtures: { verdict: string }[] },
  );
  for (const f of report.fixtures) verdicts[f.verdict] = (verdicts[f.verdict] ?? 0) + 1;
  return { ...m, verdicts };
}

/** The folder of the last run in a reports or transcripts folder (run ids sort by their start). */
async function latestRun(dir: string): Promise<string> {
  return path.join(dir, (await readdir(dir)).sort().at(-1)!);
}

export async function removeTrivial(set: TrivialSet): Promise<void> {
  await rm(set.root, { recursive: true, force: true });
}

/**
 * What a new file costs in the transcript folder of the backend's last harness run, once it has
 * ended, in ms: the median of 50 made there (`.probe-<n>`, which no reader of a transcript opens;
 * they go with the set). On ext4 without a journal (this machine's /tmp) a new inode is not one
 * freed in the last minute, or the last six when its inode-table block is dirty, and each one
 * skipped costs a lookup: after the bare work (5 files made and removed per fixture) the run's
 * own transcript files, one a fixture, get costlier as it goes. A new folder elsewhere may land
 * in another block group and cost nothing of the kind, so the probe uses the run's own.
 */
async function newFileMs(set: TrivialSet, backend: string): Promise<number> {
  const dir = await latestRun(path.join(set.root, `transcripts-${backend}`));
  const took: number[] = [];
  for (let i = 0; i < 50; i++) {
    const t0 = performance.now();
    closeSync(openSync(path.join(dir, `.probe-${i}`), 'wx'));
    took.push(performance.now() - t0);
  }
  return median(took);
}

/** The issue's targets: the harness's wall time against the bare work's, per backend. */
const RATIO_TARGET: Record<string, number> = { local: 1.3, bwrap: 1.6, docker: 2 };
const CPU_TARGET_MS = 5;
/** Pairs (the bare work, then the harness) per backend: the machine's speed drifts within a minute. */
const ROUNDS = Number(process.env.BENCH_TRIVIAL_ROUNDS ?? 3);

/**
 * N trivial fixtures (`redgreen new --runner exit-code`), each backend's `selfcheck -j 2` beside
 * the bare work (`xargs -P 2`): the harness's own cost where a fixture's work is almost nothing.
 * Each backend runs ROUNDS pairs, the bare work right before the harness, and the figures are the
 * pairs' medians: on a shared 2-core machine the same bare work took 4.1 s and 6.2 s minutes apart,
 * so one pair can say 0.95× or 1.6× of the same code. Prints the ratio (and the pairs' range), the
 * harness process's CPU per fixture (the commands it runs excluded) and its peak RSS, each beside
 * its target, with the machine's load; and the whole machine's CPU per fixture, which shows what a
 * container engine and its containers add (they are not the harness's children) and whether a run
 * was bound by CPU (2 cores: twice its wall time).
 */
export async function benchTrivial(n: number, backends: { name: string; extra?: string[] }[]): Promise<void> {
  const set = await makeTrivialFixtures(n);
  try {
    console.log(
      `\n${n} trivial fixtures (exit-code template), -j 2 / xargs -P 2, medians of ${ROUNDS} pairs (the bare work, then the harness); load ${os.loadavg()[0]!.toFixed(2)} at start`,
    );
    const perFixture = (xs: number[]) => (median(xs) / n).toFixed(1);
    // What the CPU target is measured against on this machine: a Node.js process doing only the
    // unavoidable part (its spawn of the commands, their pipes, the copies, one transcript line).
    // Each after the bare work, as each harness run is: they meet the same file system (newFileMs).
    const floors: HarnessMeasured[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      await bareTrivial(set, 2);
      floors.push(await floorTrivial(set, 2));
    }
    const floorCpu = median(floors.map((f) => f.selfCpuMs)) / n;
    // The kernel's part of a process's CPU (its system calls), per fixture: where a file system's own costs show.
    const system = (ms: HarnessMeasured[]) => `system ${(median(ms.map((m) => m.selfSystemMs)) / n).toFixed(2)} ms`;
    console.log(
      `  minimal Node harness ${(median(floors.map((f) => f.wallMs)) / 1000).toFixed(2)} s   own CPU ${floorCpu.toFixed(2)} ms/fixture (${system(floors)})   (bench/floor-harness: copy, RED, git apply, GREEN through one sh per worker; no isolation, kill or report)`,
    );
    for (const b of backends) {
      const pairs: { bare: Measured; h: TrivialMeasured; newFile: number }[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        const bare = await bareTrivial(set, 2);
        const h = await harnessTrivial(set, b.name, 2, b.extra ?? []);
        pairs.push({ bare, h, newFile: await newFileMs(set, b.name) });
      }
      const ratios = pairs.map((p) => p.h.wallMs / p.bare.wallMs);
      const machine = (xs: (number | null)[]) =>
        xs.every((x) => x !== null) ? `   machine CPU ${perFixture(xs as number[])} ms/fixture` : '';
      const label = [b.name, ...(b.extra ?? [])].join(' ');
      const bad = pairs.flatMap((p) => Object.entries(p.h.verdicts).filter(([v]) => v !== 'valid'));
      console.log(
        `  bare work            ${(median(pairs.map((p) => p.bare.wallMs)) / 1000).toFixed(2)} s   (process tree CPU ${perFixture(pairs.map((p) => p.bare.treeCpuMs))} ms/fixture)` +
          machine(pairs.map((p) => p.bare.machineCpuMs)),
      );
      console.log(
        `  ${label.padEnd(20)} ${(median(pairs.map((p) => p.h.wallMs)) / 1000).toFixed(2)} s   ${median(ratios).toFixed(2)}× bare (target ≤ ${RATIO_TARGET[b.name] ?? '?'}×; pairs ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})` +
          `   harness CPU ${(median(pairs.map((p) => p.h.selfCpuMs)) / n).toFixed(2)} ms/fixture (${system(pairs.map((p) => p.h))}; target ≤ ${CPU_TARGET_MS} ms; ${(median(pairs.map((p) => p.h.selfCpuMs)) / n / floorCpu).toFixed(1)}× the minimal harness)   tree CPU ${perFixture(pairs.map((p) => p.h.treeCpuMs))} ms/fixture` +
          `${machine(pairs.map((p) => p.h.machineCpuMs))}   peak RSS ${Math.max(...pairs.map((p) => p.h.maxRssMb)).toFixed(0)} MB` +
          `   a new file in the run's transcript folder after it ${median(pairs.map((p) => p.newFile)).toFixed(2)} ms (one a fixture)${bad.length ? `   NOT VALID: ${JSON.stringify(bad)}` : ''}`,
      );
    }
    console.log(`  load ${os.loadavg()[0]!.toFixed(2)} at end`);
  } finally {
    await removeTrivial(set);
  }
}
