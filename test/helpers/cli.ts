import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const BIN = path.join(REPO, 'dist', 'cli.js');

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliProcess {
  child: ChildProcessWithoutNullStreams;
  /** Resolves when the process has exited and its output is closed. */
  result: Promise<CliResult>;
  /**
   * Resolves as soon as the output so far satisfies `seen`; rejects, with what the process
   * printed, if it exits first, so a test never waits for something that can no longer come.
   */
  waitFor(what: string, seen: (out: { stdout: string; stderr: string }) => boolean): Promise<void>;
}

/** Spawns the built binary like a user would (npm test builds it first), with CI=true. */
export function spawnCli(args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}): CliProcess {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: opts.cwd ?? REPO, env: { ...process.env, CI: 'true', ...opts.env } });
  const out = { stdout: '', stderr: '' };
  const watchers = new Set<() => void>();
  const changed = () => watchers.forEach((w) => w());
  child.stdout.on('data', (d: Buffer) => ((out.stdout += d.toString()), changed()));
  child.stderr.on('data', (d: Buffer) => ((out.stderr += d.toString()), changed()));
  let closed = false;
  const result = new Promise<CliResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      closed = true;
      resolve({ code, signal, ...out });
      changed();
    });
  });
  const waitFor = (what: string, seen: (o: typeof out) => boolean) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (seen(out)) {
          watchers.delete(check);
          resolve();
        } else if (closed) {
          watchers.delete(check);
          reject(
            new Error(
              `redgreen ${args.join(' ')} exited (code ${child.exitCode}, signal ${child.signalCode}) before ${what}\nstdout:\n${out.stdout}\nstderr:\n${out.stderr}`,
            ),
          );
        }
      };
      watchers.add(check);
      check();
    });
  return { child, result, waitFor };
}

/** Runs the built binary to its end. */
export function runCli(args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}): Promise<CliResult> {
  return spawnCli(args, opts).result;
}
