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
  readyMs: number;
  phases: Record<string, number>;
  maxRssMb: number;
  verdict: string;
}

/** A project of one fixture whose setup makes a tree of `files` files, `bytes` each. */
async function bigProject(files: number, bytes: number): Promise<string> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'rg-bench-big-'));
  await scaffoldFixture({
    id: 'big',
    runner: 'exit-code',
    fixturesDir: path.join(root, 'fixtures'),
    oraclesDir: path.join(root, 'oracles'),
  });
  const manifestFile = path.join(root, 'fixtures/big/fixture.json');
  const manifest = JSON.parse(await readFile(manifestFile, 'utf8')) as Record<string, unknown>;
  manifest.setup = { commands: [GENERATE(files, bytes)], timeoutSec: 900 };
  await writeFile(manifestFile, JSON.stringify(manifest, null, 2));
  await writeFile(
    path.join(root, 'fixtures/big/check.sh'),
    `test -f node_modules/p${Math.floor((files - 1) / 100)}/f${files - 1}.js && test "$(sh add.sh 2 3)" = 5\n`,
  );
  return root;
}

/** One selfcheck of the project; "ready" is what a fixture waits before its tests: create, upload and setup. */
async function selfcheck(root: string, backend: string, extra: string[]): Promise<Ready> {
  const reports = path.join(root, 'reports');
  const m = await harnessRun(root, ['selfcheck', '--backend', backend, ...extra], { XDG_CACHE_HOME: path.join(root, 'cache') });
  const runs = (await readdir(reports)).sort();
  const report = JSON.parse(await readFile(path.join(reports, runs.at(-1)!, 'report.json'), 'utf8')) as {
    fixtures: { verdict: string; timings: Record<string, number> }[];
  };
  const f = report.fixtures[0]!;
  const readyMs = (f.timings.create ?? 0) + (f.timings.upload ?? 0) + (f.timings.setup ?? 0);
  return { readyMs, phases: f.timings, maxRssMb: m.maxRssMb, verdict: f.verdict };
}

/**
 * Big trees: a fixture whose setup writes 30,000 files / 300 MB (a JS repository's node_modules).
 * The first selfcheck runs setup and caches it; the second is what every later sandbox costs:
 * "ready" (create + upload + setup-cache restore) against the 100 ms target on local and bwrap
 * (copy-on-write from a prepared layer, as root). Peak RSS at a tenth of the tree and at the
 * whole one shows whether memory stays flat as trees grow.
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
      const root = await bigProject(files, sizes.bytes);
      try {
        const cold = await selfcheck(root, b.name, b.extra ?? []);
        const warm = await selfcheck(root, b.name, b.extra ?? []);
        const target = b.name === 'local' || b.name === 'bwrap' ? ' (target ≤ 100 ms)' : '';
        const phases = (r: Ready) => ['create', 'upload', 'setup'].map((p) => `${p} ${ms(r.phases[p] ?? 0)}`).join(', ');
        console.log(
          `  ${b.name.padEnd(7)} ${String(files).padStart(6)} files  first: ready ${ms(cold.readyMs)} (${phases(cold)}), RSS ${cold.maxRssMb.toFixed(0)} MB` +
            `   then: ready ${ms(warm.readyMs)}${scale === 1 ? target : ''} (${phases(warm)}), RSS ${warm.maxRssMb.toFixed(0)} MB` +
            `${cold.verdict !== 'valid' || warm.verdict !== 'valid' ? `   NOT VALID: ${cold.verdict}/${warm.verdict}` : ''}`,
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
