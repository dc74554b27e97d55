import type { Fixture } from '../../harness/fixtures/load.js';
import type { FixtureContext } from '../../harness/pipeline/context.js';
import type { FixtureEvent } from '../../harness/pipeline/events.js';
import type { SetupCache } from '../../harness/pipeline/setup-cache.js';
import type { Sandbox, SandboxBackend, SandboxSpec } from '../../harness/sandbox/core/types.js';
import { expect, onTestFinished } from 'vitest';
import { makeProject, type InlineFixture, type Project } from './project.js';

/**
 * The fixture the prepared-layer tests share (host layers: workspace-layers.test.ts; engine layers:
 * docker-layers.test.ts): a setup that makes many files and every kind of change; the tests write
 * into the workspace.
 */
export const SETUP = {
  commands: [
    'mkdir -p gen out/empty && i=0 && while [ $i -lt 1200 ]; do echo $i > gen/f$i; i=$((i+1)); done && echo 5 > gen/value',
    'ln -s ../config.txt gen/link && chmod 700 out && rm stale.txt && echo built > config.txt',
  ],
  timeoutSec: 120,
};

export const files = {
  'add.sh': 'echo $(( $1 - $2 ))\n',
  'check.sh': 'echo ran > ran.txt && test -f gen/f1199 && test "$(cat gen/link)" = built && test "$(sh add.sh 2 3)" = "$(cat gen/value)"\n',
  'config.txt': 'dev\n',
  'stale.txt': 'old\n',
};

export const MANIFEST = {
  runner: 'exit-code',
  language: 'shell',
  test: { command: 'sh check.sh', timeoutSec: 60 },
  protected: ['check.sh'],
  setup: SETUP,
};

/** A shell command listing every entry of the current folder (kind, mode, link target, content hash; with `owners`, the owner's uid). */
export function snapshotCommand(owners = false): string {
  const u = owners ? ' %U' : '';
  return `find . -mindepth 1 \\( -type l -printf '%y${u} %P -> %l\\n' \\) -o -printf '%y %m${u} %P\\n' | sort && find . -type f -exec sha256sum {} + | sort`;
}

/** A fixture's context for calling the layer phases directly, its events collected in `events`. */
export function layerContext(fixture: Fixture, sandbox: Sandbox, cache: SetupCache, events: FixtureEvent[]): FixtureContext {
  return { fixture, sandbox, signal: new AbortController().signal, emit: (e) => events.push(e), setupCache: cache };
}

/** A project holding `big`, the shared fixture (with an oracle when given), removed when the test ends. */
export async function layerProject(oracle?: string): Promise<Project> {
  const big: InlineFixture = { manifest: MANIFEST, files, ...(oracle !== undefined ? { oracle } : {}) };
  const project = await makeProject({ big });
  onTestFinished(() => project.cleanup());
  return project;
}

/** A sandbox of `backend` whose workspace holds a.txt ("a") is kept as the engine layer `<scope>-0`; returns that key. */
export async function saveSmallLayer(backend: SandboxBackend, spec: SandboxSpec, o: { scope: string; cacheDir: string }): Promise<string> {
  const key = `${o.scope}-0`;
  const maker = await backend.create(spec);
  try {
    await maker.writeFiles([{ path: 'a.txt', content: 'a\n' }]);
    expect(await maker.saveLayer!(key, { fixture: spec.fixtureId, maxBytes: 1024 ** 3, ...o })).toBeNull();
  } finally {
    await maker.destroy();
  }
  return key;
}
