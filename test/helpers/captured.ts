import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { ParseInput } from '../../harness/results/types.js';

/** A file of test/data (real runner output captured by test/helpers/capture-runner-output.sh). */
export const captured = (f: string) => readFile(new URL(`../data/${f}`, import.meta.url), 'utf8');

/** A captured run (stdout.txt, stderr.txt, exit-code) as an adapter's parse input. */
export async function capturedInput(dir: string, workdir: string): Promise<ParseInput> {
  return {
    report: null,
    stdout: await captured(`${dir}/stdout.txt`),
    stderr: await captured(`${dir}/stderr.txt`),
    exitCode: Number(await captured(`${dir}/exit-code`)),
    workdir,
  };
}

/** id → status, for comparing a whole parse result at once. */
export const statuses = (tests: { id: string; status: string }[]) => Object.fromEntries(tests.map((t) => [t.id, t.status]));

/**
 * The sha256 a capture recorded (`shaFile` in test/data) and that of the harness sources the
 * capture ran (harness/results/<source>, concatenated in order): they differ once a source changed
 * and its data was not captured again.
 */
export async function captureSources(shaFile: string, ...sources: string[]): Promise<{ recorded: string; current: string }> {
  const hash = createHash('sha256');
  for (const s of sources) hash.update(await readFile(new URL(`../../harness/results/${s}`, import.meta.url)));
  return { recorded: (await captured(shaFile)).trim(), current: hash.digest('hex') };
}
