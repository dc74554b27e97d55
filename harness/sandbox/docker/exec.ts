import { randomBytes } from 'node:crypto';
import type Docker from 'dockerode';
import { engineFailure, envList } from './client.js';
import { SANDBOX_USER } from './config.js';
import { ExecOutput, stopper } from './stream.js';
import { EXEC_MARKER_VAR, REAP_FUNCTION } from '../core/kill-script.js';
import type { ExecResult, OutputStream } from '../core/types.js';

/**
 * Runs "$@" and, once it exits, kills whatever it left behind: no process outlives the command
 * that started it, and a stray daemon cannot hold the output stream open. A cancel file written
 * by the killer before it scans closes the race with an exec whose process had not started yet.
 */
const WRAPPER = `${REAP_FUNCTION}
m=$${EXEC_MARKER_VAR}
[ -e "/tmp/.redgreen-cancel-$m" ] && exit 137
"$@"
c=$?
unset ${EXEC_MARKER_VAR}
reap "$m" $$
exit $c`;

/** Run from a second exec (without the marker) to stop a running one with its whole tree. */
const KILLER = `${REAP_FUNCTION}
: > "/tmp/.redgreen-cancel-$1" 2>/dev/null
reap "$1" ""`;

export function wrapped(argv: readonly string[]): string[] {
  return ['/bin/sh', '-c', WRAPPER, 'redgreen-exec', ...argv];
}

export function newMarker(): string {
  return randomBytes(8).toString('hex');
}

/** What a command needs, however the backend runs it (an exec, or a container of its own). */
export interface CommandRequest {
  argv: readonly string[];
  env: Record<string, string>;
  cwd: string;
  timeoutMs?: number;
  maxOutputBytes?: number;
  onOutput?: (stream: OutputStream, chunk: Buffer) => void;
  signal?: AbortSignal;
}

export interface ContainerExecRequest extends CommandRequest {
  /** Called when killing from inside the container failed (pids limit hit, say): stop it all. */
  onKillFailed: (error: unknown) => Promise<void>;
  /** Whether the sandbox was destroyed (or stopped) on purpose: a vanished exec is then a killed command. */
  stopped: () => boolean;
}

/** Runs a short internal command (no marker, no capture limits that matter) and returns its result. */
export async function execSimple(docker: Docker, container: Docker.Container, argv: readonly string[]): Promise<ExecResult> {
  const exec = await container.exec({
    Cmd: [...argv],
    User: SANDBOX_USER,
    AttachStdout: true,
    AttachStderr: true,
    AttachStdin: false,
    Tty: false,
  });
  const stream = await exec.start({ hijack: true, stdin: false });
  const out = new ExecOutput(docker, stream, 1024 * 1024);
  await out.ended;
  const info = await exec.inspect();
  return out.result(info.ExitCode ?? 125, { timedOut: false, aborted: false });
}

/**
 * One command through the Exec API. The API cannot kill an exec, so a timeout or an abort runs
 * KILLER in a second exec, which kills the command's tree by its marker; if even that cannot
 * start, `onKillFailed` stops the container.
 */
export async function containerExec(docker: Docker, container: Docker.Container, req: ContainerExecRequest): Promise<ExecResult> {
  const started = performance.now();
  const marker = newMarker();
  let exec: Docker.Exec;
  let stream: NodeJS.ReadWriteStream;
  try {
    exec = await container.exec({
      Cmd: wrapped(req.argv),
      Env: envList({ ...req.env, [EXEC_MARKER_VAR]: marker }),
      WorkingDir: req.cwd,
      User: SANDBOX_USER,
      AttachStdin: false,
      AttachStdout: true,
      AttachStderr: true,
      Tty: false,
    });
    stream = (await exec.start({ hijack: true, stdin: false })) as NodeJS.ReadWriteStream;
  } catch (e) {
    throw engineFailure('exec', e);
  }
  const out = new ExecOutput(docker, stream, req.maxOutputBytes, req.onOutput, started);
  let killing: Promise<void> | undefined;
  const kill = () =>
    (killing ??= execSimple(docker, container, ['/bin/sh', '-c', KILLER, 'redgreen-kill', marker]).then(
      (r) => (r.exitCode === 0 ? undefined : req.onKillFailed(new Error(r.stdout || r.stderr || `exit ${r.exitCode}`))),
      (e: unknown) => req.onKillFailed(e),
    ));
  const stop = stopper(req, () => void kill());
  try {
    await out.ended;
    await killing;
    const info = await exec.inspect().catch((e: unknown) => e as Error);
    if (info instanceof Error || info.ExitCode === null) {
      // Gone with its container (destroyed, or stopped because it could not be killed): killed.
      if (req.stopped()) return out.result(137, stop.state);
      // The connection to the engine broke, not the command: an infrastructure failure, never a result.
      await kill();
      throw engineFailure('exec', info instanceof Error ? info : new Error('the output stream closed before the command ended'));
    }
    const r = out.result(info.ExitCode, stop.state);
    // 126 with the runtime's message: the wrapper could not even start. Not the command's exit.
    if (info.ExitCode === 126 && !stop.state.timedOut && !stop.state.aborted && r.stdout.startsWith('OCI runtime')) {
      throw engineFailure('exec', new Error(r.stdout.trim()));
    }
    return r;
  } finally {
    stop.dispose();
  }
}
