import { spawn } from 'node:child_process';

export interface ToolResult {
  /** The exit code; null when the tool could not start or was killed by a signal. */
  code: number | null;
  stdout: string;
  stderr: string;
  /** Why it could not start (ENOENT, EACCES), if it did not. */
  error?: string;
}

/**
 * Runs a host tool the harness itself needs (git, mount) to its end, with `input` on its stdin.
 * Plain `spawn`: thousands of fixtures each run one, and a wrapper's own cost per call adds up.
 */
export function runTool(
  file: string,
  args: readonly string[],
  o: { cwd?: string; env?: Record<string, string>; input?: string | Buffer } = {},
): Promise<ToolResult> {
  return new Promise((resolve) => {
    const child = spawn(file, args, {
      ...(o.cwd ? { cwd: o.cwd } : {}),
      ...(o.env ? { env: o.env } : {}),
      stdio: [o.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let error: string | undefined;
    child.stdout!.on('data', (d: Buffer) => out.push(d));
    child.stderr!.on('data', (d: Buffer) => err.push(d));
    child.on('error', (e) => (error = e.message));
    // A tool that exits without reading all of its input closes the pipe: not an error of ours.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(o.input);
    child.on('close', (code) =>
      resolve({ code, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString(), ...(error ? { error } : {}) }),
    );
  });
}

/** Bytes a folder takes on disk (`du -sb`), 0 when it cannot be read. */
export async function diskUsage(dir: string): Promise<number> {
  const r = await runTool('du', ['-sb', dir]);
  return Number(r.stdout.split(/\s/)[0]) || 0;
}
