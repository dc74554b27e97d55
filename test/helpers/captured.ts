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
