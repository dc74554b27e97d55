import { spawn } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const MEASURED_CLI = fileURLToPath(new URL('./measured-cli.js', import.meta.url));

export interface Measured {
  wallMs: number;
  /** CPU of the process tree (the command and everything it ran), from bash's `times`. */
  treeCpuMs: number;
}

export interface HarnessMeasured extends Measured {
  /** The harness process's own CPU (its children, the commands it ran, excluded). */
  selfCpuMs: number;
  maxRssMb: number;
}

const quote = (a: string) => `'${a.replaceAll("'", `'\\''`)}'`;

/** Runs a shell command line under bash and reads its children's CPU from `times`. */
export function measure(commandLine: string, cwd: string, env: Record<string, string> = {}): Promise<Measured> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn('bash', ['-c', `${commandLine} >/dev/null 2>&1; times`], {
      cwd,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('close', () => {
      // `times` prints the shell's own times, then its children's: "0m1.234s 0m0.567s".
      const last = out.trim().split('\n').at(-1) ?? '';
      const secs = [...last.matchAll(/(\d+)m([\d.]+)s/g)].map((m) => Number(m[1]) * 60 + Number(m[2]));
      resolve({ wallMs: performance.now() - t0, treeCpuMs: secs.reduce((a, s) => a + s, 0) * 1000 });
    });
  });
}

/**
 * The CLI (`redgreen <args>`) as a user runs it, with CI=true, measured: its wall time, its whole
 * process tree's CPU, and its own CPU and peak RSS (written by measured-cli.js at its exit).
 * `program` measures another build's dist/cli-program.js (an A/B comparison).
 */
export async function harnessRun(
  cwd: string,
  args: string[],
  env: Record<string, string> = {},
  program?: string,
): Promise<HarnessMeasured> {
  const usage = path.join(os.tmpdir(), `rg-bench-usage-${process.pid}-${Math.random().toString(36).slice(2)}.json`);
  try {
    const m = await measure([process.execPath, MEASURED_CLI, usage, ...args].map(quote).join(' '), cwd, {
      CI: 'true',
      ...(program ? { REDGREEN_BENCH_PROGRAM: program } : {}),
      ...env,
    });
    const u = JSON.parse(await readFile(usage, 'utf8')) as { userMs: number; systemMs: number; maxRssKb: number };
    return { ...m, selfCpuMs: u.userMs + u.systemMs, maxRssMb: u.maxRssKb / 1024 };
  } finally {
    await rm(usage, { force: true });
  }
}
