import { spawn } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { OwnUsage } from './own-usage.js';

const MEASURED_CLI = fileURLToPath(new URL('./measured-cli.js', import.meta.url));

export interface Measured {
  wallMs: number;
  /** CPU of the process tree (the command and everything it ran), from bash's `times`. */
  treeCpuMs: number;
  /**
   * Busy CPU of the whole machine meanwhile, every core (/proc/stat; null elsewhere): also what
   * the tree does not own, such as a container engine and its containers, and any other load.
   */
  machineCpuMs: number | null;
  /** The command line's exit status. */
  exitCode: number;
}

/** The machine's busy CPU so far, all cores (user, nice, system, irq, softirq, steal), in ms. */
export async function machineBusyMs(): Promise<number | null> {
  const stat = await readFile('/proc/stat', 'utf8').catch(() => null);
  const f = stat?.split('\n', 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
  if (!f || f.length < 8 || f.some((n) => !Number.isFinite(n))) return null;
  const [user, nice, system, , , irq, softirq, steal] = f as [number, number, number, number, number, number, number, number];
  // In USER_HZ ticks, 100 a second on every Linux ABI.
  return (user + nice + system + irq + softirq + steal) * 10;
}

export interface HarnessMeasured extends Measured {
  /** The harness process's own CPU (its children, the commands it ran, excluded): user + system. */
  selfCpuMs: number;
  /** Of selfCpuMs, the kernel's part: its system calls (a file system's own costs show here). */
  selfSystemMs: number;
  maxRssMb: number;
}

const quote = (a: string) => `'${a.replaceAll("'", `'\\''`)}'`;

/** Runs a shell command line under bash and reads its children's CPU from `times`. */
export async function measure(commandLine: string, cwd: string, env: Record<string, string> = {}): Promise<Measured> {
  const busy0 = await machineBusyMs();
  const m = await new Promise<Omit<Measured, 'machineCpuMs'>>((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn('bash', ['-c', `${commandLine} >/dev/null 2>&1; s=$?; times; exit $s`], {
      cwd,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      // `times` prints the shell's own times, then its children's: "0m1.234s 0m0.567s".
      const last = out.trim().split('\n').at(-1) ?? '';
      const secs = [...last.matchAll(/(\d+)m([\d.]+)s/g)].map((m) => Number(m[1]) * 60 + Number(m[2]));
      resolve({ wallMs: performance.now() - t0, treeCpuMs: secs.reduce((a, s) => a + s, 0) * 1000, exitCode: code ?? -1 });
    });
  });
  const busy1 = await machineBusyMs();
  return { ...m, machineCpuMs: busy0 === null || busy1 === null ? null : busy1 - busy0 };
}

/**
 * The CLI (`redgreen <args>`) as a user runs it, with CI=true, measured: its wall time, its whole
 * process tree's CPU, and its own CPU and peak RSS (written by measured-cli.js at its exit).
 * `program` measures another build's dist/cli-program.js (an A/B comparison).
 */
export function harnessRun(cwd: string, args: string[], env: Record<string, string> = {}, program?: string): Promise<HarnessMeasured> {
  return measureScript(MEASURED_CLI, args, cwd, { CI: 'true', ...(program ? { REDGREEN_BENCH_PROGRAM: program } : {}), ...env });
}

/**
 * A Node.js script that writes its own resource use (writeOwnUsage) to the file named by its first
 * argument, measured like any command and by that file.
 */
export async function measureScript(
  script: string,
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
): Promise<HarnessMeasured> {
  const usage = path.join(os.tmpdir(), `rg-bench-usage-${process.pid}-${Math.random().toString(36).slice(2)}.json`);
  try {
    const line = [process.execPath, script, usage, ...args].map(quote).join(' ');
    const m = await measure(line, cwd, env);
    // A CLI run that fails still measures itself (at its exit); a script that died before that did not.
    const text = await readFile(usage, 'utf8').catch(() => {
      throw new Error(
        `${path.basename(script)} exited with ${m.exitCode} before measuring itself; run it by hand to see why: cd ${quote(cwd)} && ${line}`,
      );
    });
    const u = JSON.parse(text) as OwnUsage;
    return { ...m, selfCpuMs: u.userMs + u.systemMs, selfSystemMs: u.systemMs, maxRssMb: u.maxRssKb / 1024 };
  } finally {
    await rm(usage, { force: true });
  }
}
