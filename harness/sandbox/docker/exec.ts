import { constants as osc } from 'node:os';
import type Docker from 'dockerode';
import { describeError, RedgreenError } from '../../errors.js';
import { engineFailure, envList } from './client.js';
import { SANDBOX_USER } from './config.js';
import { stopper } from '../core/capture.js';
import { ExecOutput } from './stream.js';
import { EXEC_MARKER_VAR, REAP_FUNCTION } from '../core/kill-script.js';
import type { ExecResult } from '../core/types.js';
import type { CommandRequest } from '../core/command-server.js';
import { randomHex } from '../core/random.js';

/** The wrapper's exit when it could not finish its job (see WRAPPER); it then says why on stderr. */
export const WRAPPER_FAILED_EXIT = 255;
const WRAPPER_SAYS = 'redgreen-exec:';

/*
 * Commands through the Exec API: how a container whose image cannot run the command server
 * (server-script.ts) runs them, one exec each.
 */

/**
 * Runs "$@" and, once it exits, kills whatever it left behind: no process outlives the command
 * that started it, and a stray daemon cannot hold the output stream open. A cancel file written
 * by the killer before it scans closes the race with an exec whose process had not started yet.
 * Starting the command and the reap's scans fork; when the pids limit is full (a fork bomb the
 * command left), the shell dies of it, and the EXIT trap (builtins only: no fork) says so on
 * stderr with the command's own exit code, and exits WRAPPER_FAILED_EXIT: the sandbox then
 * replaces its container (parseWrapperFailure), since nothing inside can be trusted to kill.
 */
const WRAPPER = `${REAP_FUNCTION}
failed() {
  [ -n "$reaped" ] && return
  if [ -n "$c" ]; then w="the command exited $c;"; else w="the command could not start:"; fi
  printf '\n%s %s processes could not be forked or killed inside the container\n' '${WRAPPER_SAYS}' "$w" >&2
  exit ${WRAPPER_FAILED_EXIT}
}
m=$${EXEC_MARKER_VAR}
[ -e "/tmp/.redgreen-cancel-$m" ] && exit 137
trap failed EXIT
"$@"
c=$?
unset ${EXEC_MARKER_VAR}
reap "$m" $$ && reaped=1
exit $c`;

/**
 * What the wrapper said when it failed: the command's exit code when it ran (null when it could
 * not start), or undefined when the exit is the command's own (it may exit 255 itself).
 */
export function parseWrapperFailure(r: ExecResult): { exitCode: number | null } | undefined {
  if (r.exitCode !== WRAPPER_FAILED_EXIT) return undefined;
  const line = r.stderr.trimEnd().split('\n').pop() ?? '';
  if (!line.startsWith(WRAPPER_SAYS)) return undefined;
  const ran = /the command exited (\d+);/.exec(line);
  return { exitCode: ran ? Number(ran[1]) : null };
}

const SIGNAL_NAMES = new Map<number, string>(Object.entries(osc.signals).map(([name, n]) => [n, name]));

/** The result with the command's own exit code (the wrapper's was its failure). */
function withExitCode(r: ExecResult, exitCode: number): ExecResult {
  return { ...r, exitCode, signal: exitCode > 128 ? (SIGNAL_NAMES.get(exitCode - 128) ?? null) : null };
}

/** Run from a second exec (without the marker) to stop a running one with its whole tree. */
const KILLER = `${REAP_FUNCTION}
: > "/tmp/.redgreen-cancel-$1" 2>/dev/null
reap "$1" ""`;

/**
 * Run (as the sandbox user) once no command runs: kills every process of that user but itself —
 * `kill -9 -1` is one system call, needs no fork and is atomic against a fork bomb — then confirms,
 * builtins only, that none is left with a command line (a killed process loses it as it exits;
 * zombies have none), killing again meanwhile. The init and the keeper run as root and stay.
 */
export const SWEEPER = `i=0
while [ $i -lt 2000 ]; do
  kill -9 -1 2>/dev/null
  alive=
  for d in /proc/[0-9]*; do
    [ "$d" = "/proc/$$" ] || [ ! -O "$d" ] && continue
    x=; read -r x < "$d/cmdline" 2>/dev/null
    [ -n "$x" ] && { alive=$d; break; }
  done
  [ -z "$alive" ] && exit 0
  i=$((i+1))
done
echo "redgreen: a process of the sandbox user survives SIGKILL ($alive)" >&2
exit 1`;

export function wrapped(argv: readonly string[]): string[] {
  return ['/bin/sh', '-c', WRAPPER, 'redgreen-exec', ...argv];
}

export function newMarker(): string {
  return randomHex(8);
}

export interface ContainerExecRequest extends CommandRequest {
  /**
   * Called when killing from inside the container failed or could not be confirmed (the pids
   * limit is full, say): the container is replaced, which kills everything in it. Never throws.
   */
  onKillFailed: (why: string) => Promise<void>;
  /** Why the container this exec ran in is gone, if it is: a vanished exec is then killed, not an engine fault. */
  gone: () => 'destroyed' | 'replaced' | undefined;
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
      (r) =>
        r.exitCode === 0
          ? undefined
          : req.onKillFailed(`the kill of a command failed: ${(r.stderr || r.stdout).trim() || `exit ${r.exitCode}`}`),
      (e: unknown) => req.onKillFailed(`the kill of a command could not start: ${describeError(e)}`),
    ));
  const stop = stopper(req, () => void kill());
  try {
    await out.ended;
    await killing;
    const info = await exec.inspect().catch((e: unknown) => e as Error);
    if (info instanceof Error || info.ExitCode === null) {
      // Gone with its container: killed, when that was the point (destroyed, or its own kill failed).
      const gone = req.gone();
      if (gone === 'destroyed' || (gone && (stop.state.timedOut || stop.state.aborted))) return out.result(137, stop.state);
      if (gone)
        throw new RedgreenError(
          'SANDBOX_FAILED',
          'the sandbox replaced its container while this command ran: another command left processes that could not be killed',
        );
      // The connection to the engine broke, not the command: an infrastructure failure, never a result.
      await kill();
      throw engineFailure('exec', info instanceof Error ? info : new Error('the output stream closed before the command ended'));
    }
    const r = out.result(info.ExitCode, stop.state);
    const failed = parseWrapperFailure(r);
    if (failed) {
      // Nothing inside the container can be trusted to kill any more: replace it (the workspace stays).
      await req.onKillFailed('a command left processes that could not be killed from inside the container');
      if (failed.exitCode === null)
        throw new RedgreenError(
          'SANDBOX_FAILED',
          'the command could not start: no process could be forked in the sandbox (its pids limit was full); the container was replaced',
        );
      return withExitCode(r, failed.exitCode);
    }
    // 126 with the runtime's message: the wrapper could not even start. Not the command's exit.
    if (info.ExitCode === 126 && !stop.state.timedOut && !stop.state.aborted && r.stdout.startsWith('OCI runtime')) {
      throw engineFailure('exec', new Error(r.stdout.trim()));
    }
    return r;
  } finally {
    stop.dispose();
  }
}
