import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { REPO } from '../helpers/cli.js';

/**
 * What each folder of harness/ may import (besides itself and errors.ts), in the spirit of
 * Playwright's DEPS lists. The folders follow a fixture's life, and a folder imports only from
 * folders below it in the pipeline, never back up. `npm run lint` and `npm test` check it.
 */
const DEPS: Record<string, readonly string[]> = {
  config: [],
  'sandbox/core': ['config'],
  'sandbox/host': ['config', 'sandbox/core', 'sandbox/registry.ts'],
  'sandbox/bwrap': ['config', 'sandbox/core', 'sandbox/host', 'sandbox/registry.ts'],
  'sandbox/docker': ['config', 'sandbox/core', 'sandbox/registry.ts'],
  'sandbox/e2b': ['config', 'sandbox/core', 'sandbox/registry.ts'],
  // Podman is the Docker backend on another engine.
  'sandbox/podman': ['config', 'sandbox/core', 'sandbox/docker', 'sandbox/registry.ts'],
  // The registry's own files: the contract, and the list of every backend's descriptor.
  sandbox: ['config', 'sandbox/core', 'sandbox/*/descriptor.ts'],
  fixtures: ['config', 'sandbox/core'],
  patch: ['config', 'sandbox/core', 'sandbox/host', 'fixtures'],
  results: ['config', 'sandbox/core', 'fixtures'],
  scoring: ['fixtures', 'patch', 'results'],
  pipeline: ['config', 'sandbox/core', 'fixtures', 'patch', 'results', 'scoring'],
  agents: ['config', 'sandbox/core', 'fixtures', 'patch', 'pipeline'],
  transcripts: ['config', 'sandbox/core', 'fixtures', 'scoring', 'pipeline'],
  reporters: ['config', 'fixtures', 'results', 'scoring', 'pipeline', 'transcripts'],
  commands: ['*'],
  // The public API: the commands' code, called as a library.
  api: ['*'],
  bench: ['*'],
  '.': ['*'],
};

const HARNESS = path.join(REPO, 'harness');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : [],
  );
}

/** The DEPS entry a file belongs to: the deepest listed folder holding it. */
function ruleOf(rel: string): string {
  const dirs = path.dirname(rel).split('/');
  for (let n = dirs.length; n > 0; n--) if (DEPS[dirs.slice(0, n).join('/')]) return dirs.slice(0, n).join('/');
  return '.';
}

function allowed(rule: string, target: string): boolean {
  if (target === 'errors.ts' || ruleOf(target) === rule) return true;
  return DEPS[rule]!.some(
    (a) => a === '*' || target === a || target.startsWith(`${a}/`) || (a.includes('*') && path.matchesGlob(target, a)),
  );
}

describe('import boundaries', () => {
  test('every import in harness/ goes down the pipeline, never back up', () => {
    const violations: string[] = [];
    for (const file of sourceFiles(HARNESS)) {
      const rel = path.relative(HARNESS, file);
      const rule = ruleOf(rel);
      const text = readFileSync(file, 'utf8');
      // Static imports and re-exports at the start of a line, and dynamic import('…') calls.
      for (const m of [
        ...text.matchAll(/^(?:import|export)\b[^;]*?\bfrom\s*'(\.{1,2}\/[^']+)\.js'/gm),
        ...text.matchAll(/\bimport\(\s*'(\.{1,2}\/[^']+)\.js'\s*\)/g),
      ]) {
        const target = path.relative(HARNESS, path.resolve(path.dirname(file), `${m[1]}.ts`));
        if (!allowed(rule, target))
          violations.push(`${rel} imports ${target} (${rule} may import: ${DEPS[rule]!.join(', ') || 'nothing'})`);
      }
    }
    expect(violations).toEqual([]);
  });

  test('the check sees an upward import', () => {
    expect(allowed('scoring', 'pipeline/result.ts')).toBe(false);
    expect(allowed('sandbox/docker', 'sandbox/e2b/limiter.ts')).toBe(false);
    expect(allowed('sandbox/core', 'sandbox/host/kill.ts')).toBe(false);
    expect(allowed('sandbox', 'sandbox/podman/descriptor.ts')).toBe(true);
    expect(allowed('pipeline', 'scoring/verdicts.ts')).toBe(true);
  });
});
