import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { scaffoldFixture } from '../fixtures/scaffold.js';
import { harnessRun } from './measured.js';
import { ms } from './stats.js';

/** A setup that writes `files` files of `bytes` each under node_modules, as an npm install would. */
const GENERATE = (files: number, bytes: number) =>
  `node -e 'const fs=require("fs");const b=Buffer.alloc(${bytes},120);for(let i=0;i<${files};i++){const d="node_modules/p"+Math.floor(i/100);if(i%100===0)fs.mkdirSync(d,{recursive:true});fs.writeFileSync(d+"/f"+i+".js",b)}'`;

interface Ready {
  /** Per fixture, in the order they ran. */
  readyMs: number[];
  phases: Record<string, number>[];
  maxRssMb: number;
  verdicts: string[];
}

/** A project of `count` fixtures whose setup makes a tree of `files` files, `bytes` each. */
async function bigProject(files: number, bytes: number, count: number): Promise<string> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'rg-bench-big-'));
  for (let i = 0; i < count; i++) {
    const id = `big-${i}`;
    await scaffoldFixture({
      id,
      runner: 'exit-code',
      fixturesDir: path.join(root, 'fixtures'),
      oraclesDir: path.join(root, 'oracles'),
    });
    const manifestFile = path.join(root, 'fixtures', id, 'fixture.json');
    const manifest = JSON.parse(await readFile(manifestFile, 'utf8')) as Record<string, unknown>;
    manifest.setup = { commands: [GENERATE(files, bytes)], timeoutSec: 900 };
    await writeFile(manifestFile, JSON.stringify(manifest, null, 2));
    await writeFile(
      path.join(root, 'fixtures', id, 'check.sh'),
      `test -f node_modules/p${Math.floor((files - 1) / 100)}/f${files - 1}.js && test "$(sh add.sh 2 3)" = 5\n`,
    );
  }
  return root;
}

/** One selfcheck of the project, one fixture at a time; "ready" is what a fixture waits before its tests: create, upload and setup. */
async function selfcheck(root: string, backend: string, extra: string[]): Promise<Ready> {
  const reports = path.join(root, 'reports');
  const m = await harnessRun(root, ['selfcheck', '--backend', backend, '-j', '1', ...extra], {
    XDG_CACHE_HOME: path.join(root, 'cache'),
  });
  const runs = (await readdir(reports)).sort();
  const report = JSON.parse(await readFile(path.join(reports, runs.at(-1)!, 'report.json'), 'utf8')) as {
    fixtures: { verdict: string; timings: Record<string, number> }[];
  };
  const fixtures = report.fixtures;
  return {
    readyMs: fixtures.map((f) => (f.timings.create ?? 0) + (f.timings.upload ?? 0) + (f.timings.setup ?? 0)),
    phases: fixtures.map((f) => f.timings),
    maxRssMb: m.maxRssMb,
    verdicts: fixtures.map((f) => f.verdict),
  };
}

/** On an engine, a container takes half a second or more to start: with `--pool`, the next fixtures' start ahead over their layers. */
const ENGINES = ['docker', 'podman'];

/**
 * Big trees: a fixture whose setup writes 30,000 files / 300 MB (a JS repository's node_modules).
 * The first selfcheck runs setup and caches it; the second is what every later sandbox costs:
 * "ready" (create + upload + setup-cache restore) against the 100 ms target (copy-on-write from a
 * prepared layer). On an engine the full-size project has three such fixtures and the second
 * selfcheck `--pool 2`: the first fixture's container starts when it asks for it, the next ones'
 * were started over their layers while the one before ran (the target is for those). Peak RSS at
 * a tenth of the tree and at the whole one shows whether memory stays flat as trees grow.
 */
export async function benchBigTrees(
  backends: { name: string; extra?: string[] }[],
  sizes = { files: 30_000, bytes: 10_000 },
): Promise<void> {
  console.log(
    `\nbig trees: setup writes ${sizes.files} files of ${sizes.bytes} bytes (${((sizes.files * sizes.bytes) / 1e6).toFixed(0)} MB)`,
  );
  for (const b of backends) {
    for (const scale of [10, 1]) {
      const files = Math.floor(sizes.files / scale);
      const engine = ENGINES.includes(b.name) && scale === 1;
      const root = await bigProject(files, sizes.bytes, engine ? 3 : 1);
      try {
        const cold = await selfcheck(root, b.name, b.extra ?? []);
        const warm = await selfcheck(root, b.name, [...(b.extra ?? []), ...(engine ? ['--pool', '2'] : [])]);
        const phases = (r: Ready) => ['create', 'upload', 'setup'].map((p) => `${p} ${ms(r.phases[0]![p] ?? 0)}`).join(', ');
        const then = engine
          ? `then (--pool 2): first fixture ready ${ms(warm.readyMs[0]!)} (${phases(warm)}); the next, started ahead: ready ${warm.readyMs
              .slice(1)
              .map(ms)
              .join(', ')} (target ≤ 100 ms)`
          : `then: ready ${ms(warm.readyMs[0]!)}${scale === 1 ? ' (target ≤ 100 ms)' : ''} (${phases(warm)})`;
        const invalid = [...cold.verdicts, ...warm.verdicts].filter((v) => v !== 'valid');
        console.log(
          `  ${b.name.padEnd(7)} ${String(files).padStart(6)} files  first: ready ${ms(cold.readyMs[0]!)} (${phases(cold)}), RSS ${cold.maxRssMb.toFixed(0)} MB` +
            `   ${then}, RSS ${warm.maxRssMb.toFixed(0)} MB` +
            `${invalid.length ? `   NOT VALID: ${[...cold.verdicts, ...warm.verdicts].join('/')}` : ''}`,
        );
      } finally {
        await removeEngineLayers(b.name, root);
        await rm(root, { recursive: true, force: true });
      }
    }
  }
}

/** The layers a container engine keeps outlive the bench's cache folder: those of its cache go with it. */
async function removeEngineLayers(backend: string, root: string): Promise<void> {
  if (backend !== 'docker' && backend !== 'podman') return;
  const [{ dockerClient }, { podmanClient }, { SetupCache }, { pruneLayers }] = await Promise.all([
    import('../sandbox/docker/client.js'),
    import('../sandbox/podman/client.js'),
    import('../pipeline/setup-cache.js'),
    import('../sandbox/docker/layers.js'),
  ]);
  // The cache the bench's selfchecks use (XDG_CACHE_HOME in selfcheck above).
  const scope = SetupCache.under(path.join(root, 'cache', 'redgreen')).layers!.scope;
  await pruneLayers(backend === 'docker' ? dockerClient() : podmanClient(), scope, { all: true }).catch(() => undefined);
}
