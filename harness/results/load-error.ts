import path from 'node:path';
import { firstLines, type TestCase } from './types.js';

/**
 * A runner that stops before any test because a test file did not load (mocha's "Exception during
 * run", uvu's import error) prints the error and no report: one broken entry named after the first
 * workspace file its stack names (outside node_modules), or after the runner when none is named.
 */
export function loadErrorEntry(text: string, workdir: string, fallbackId: string): TestCase {
  const inWorkspace = (f: string) => f.startsWith(`${workdir}/`) && !f.includes('/node_modules/');
  const paths = (re: RegExp) => [...text.matchAll(re)].map((m) => decodeURIComponent(m[1]!)).filter(inWorkspace);
  const FILE = String.raw`(?:file://)?(/[^\s():'"]+\.[cm]?[jt]sx?)`;
  // The file that imports a missing module is the broken one, not the module it asks for.
  const file =
    paths(new RegExp(`imported from ${FILE}`, 'g'))[0] ??
    paths(new RegExp(`Require stack:\\n- ${FILE}`, 'g'))[0] ??
    paths(new RegExp(`${FILE}:\\d+`, 'g'))[0] ??
    paths(new RegExp(FILE, 'g'))[0];
  const id = file ? path.relative(workdir, file).split(path.sep).join('/') : fallbackId;
  // The error itself, without what the tools around it printed first (npm's warnings).
  const lines = text.trim().split('\n');
  const start = lines.findIndex((l) => /\b(\w*Error|Exception)\b/.test(l));
  return { id, status: 'error', message: firstLines(lines.slice(Math.max(start, 0)).join('\n')) ?? 'the test files did not load' };
}
