import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { Socket } from 'node:net';
import {
  CommandServer,
  type CommandServerOptions,
  shellWord,
  type CommandRequest,
  type ServerOutcome,
  type ServerState,
} from '../core/command-server.js';
import { groupGone, signal, type SharedGroup } from './kill.js';

/** The fd of the host command that PIPED passes to the program it wraps, and not to its cats. */
export const SIDE_FD = 3;

/**
 * The host shell around a server (`"$@"`): its stdout and stderr become real pipes, relayed by a
 * cat each to the harness. Node gives a child sockets, and a socket cannot be opened anew through
 * /proc/self/fd, which is how a server gives each command an output of its own (a command that
 * makes its output non-blocking must not make the server's so). SIDE_FD goes to the program only.
 */
export const PIPED = `{ "$@" 2>&1 1>&7 7>&- | cat 1>&2 7>&- ${SIDE_FD}>&-; } 7>&1 | cat ${SIDE_FD}>&-`;

/** A server's host command, connected: its CommandServer, and when it is gone (exited, its pipes closed). */
export interface SpawnedServer {
  pid: number | undefined;
  input: NodeJS.WritableStream;
  commands: CommandServer;
  gone: Promise<void>;
  /**
   * Whether the server keeps the harness process alive: while it works for the harness (starting,
   * a command, ending), not while it waits idle for one. A program that never closes its backend
   * then still exits, and the server ends with it, at the end of its input.
   */
  hold: (on: boolean) => void;
}

/**
 * Starts a server's host command detached, with pipes for its input, output, errors and SIDE_FD
 * (lines of which go to `onSide`), its output framed by a CommandServer (`options`); `gone` ends
 * the CommandServer once the command has exited and every holder of its pipes with it.
 */
export function spawnServer(
  file: string,
  args: readonly string[],
  o: { cwd: string; env: Record<string, string>; name: string; options: CommandServerOptions; onSide: (chunk: Buffer) => void },
): SpawnedServer {
  const child = spawn(file, args, { cwd: o.cwd, env: o.env, detached: true, stdio: ['pipe', 'pipe', 'pipe', 'pipe'] });
  const commands = new CommandServer(child.stdin, o.options);
  child.stdin.on('error', () => undefined); // a dead server's input: its end is seen on its output
  child.stdout.on('data', (c: Buffer) => commands.push('stdout', c));
  child.stderr.on('data', (c: Buffer) => commands.push('stderr', c));
  child.stdio[SIDE_FD]!.on('data', o.onSide);
  const gone = new Promise<void>((resolve) => {
    child.once('close', () => resolve());
    child.once('error', () => resolve());
  }).then(() => commands.ended(`${o.name} ended`));
  // Node's pipes to a child are sockets: they can stop holding the event loop as the child can.
  const handles: { ref(): unknown; unref(): unknown }[] = [child, ...(child.stdio.slice(0, SIDE_FD + 1) as unknown as Socket[])];
  const hold = (on: boolean) => handles.forEach((h) => (on ? h.ref() : h.unref()));
  return { pid: child.pid, input: child.stdin, commands, gone, hold };
}

/** Signals a command may send its whole group (`kill 0`): the server ignores them, its commands get them back. */
const GROUP_SIGNALS = 'HUP INT QUIT TERM USR1 USR2 ALRM';

/**
 * The local backend's command server: a POSIX sh loop on the host that starts the commands of any
 * local sandbox, one at a time, so the harness writes a line instead of spawning a process (a
 * spawn blocks Node's event loop for about a millisecond, and its child pays again to leave
 * Node's memory behind: over thousands of small fixtures, more than the fixtures' own work).
 * A request is `run <id> <token> <shell line>`: the line (commandLine, every value single-quoted)
 * goes to the folder, sets exactly the command's environment and execs it in a subshell, with
 * default signal handling and its output reopened as its own. When it ends, the server says
 * `<id> <exit code>` on SIDE_FD and waits: the harness kills what the command left (its marker,
 * its share of the group) and answers `reaped <id> <state>`; only then does the server frame the
 * command's output (core/frames.ts), so nothing the command left can write after its frame.
 * The server leads a session of its own (setsid), which its commands share: a command that
 * signals its group (`kill 0`) reaches the server, which ignores what it can, and never the pipes
 * that carry the output. Its hello ends with its pid: the group's.
 */
export const HOST_SERVER_SCRIPT = `cd /
trap '' ${GROUP_SIGNALS}
echo "redgreen-server ready 1 $$"
NL='
'
IFS= read -r _ || exit
while IFS= read -r req; do
  kind=\${req%% *}; rest=\${req#* }; id=\${rest%% *}; rest=\${rest#* }; tok=\${rest%% *}; line=\${rest#* }
  [ "$kind" = run ] || exit 3
  (trap - ${GROUP_SIGNALS}; eval "$line") </dev/null >/proc/self/fd/1 2>/proc/self/fd/2 ${SIDE_FD}>&-
  code=$?
  echo "$id $code" >&${SIDE_FD}
  IFS= read -r ack || exit
  case $ack in "reaped $id "*) state=\${ack##* } ;; *) exit 3 ;; esac
  printf '%s %s %s %s - - -\\n' "$tok" "$id" "$code" "$state"
  printf '%s %s\\n' "$tok" "$id" >&2
done`;

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The shell line of a request, for a server's subshell to eval: into the folder, exactly the
 * command's variables (a server passes on none of its own: its PATH and the shell's PWD and
 * OLDPWD go), then exec; every value single-quoted. A command without PATH, or with a variable
 * whose name the shell cannot export, goes through `env -i`, and so does a program whose name
 * holds "=" (through sh's exec: env would take it for a variable). The harness's own commands
 * (`internal`) run as they are, in the server's environment and folder; a script of its own
 * (`/bin/sh -c <script>`) is evaluated by the subshell itself.
 */
export function commandLine(req: Pick<CommandRequest, 'argv' | 'env' | 'cwd' | 'internal'>): string {
  const argv = req.argv.map(shellWord).join(' ');
  if (req.internal) {
    // A script of the harness's own runs in the subshell itself: no shell started for it.
    const [sh, c, script, ...rest] = req.argv;
    return sh === '/bin/sh' && c === '-c' && script !== undefined && !rest.length ? `eval ${shellWord(script)}` : `exec ${argv}`;
  }
  const vars = Object.entries(req.env);
  const cd = `cd ${shellWord(req.cwd)}`;
  // Without PATH, env's exec looks in the system's default folders, as a program's exec would.
  if (vars.some(([k]) => !NAME.test(k)) || !('PATH' in req.env)) {
    const program = req.argv[0]?.includes('=') ? `/bin/sh -c 'exec "$@"' sh ${argv}` : argv;
    return `${cd} && exec env -i ${vars.map(([k, v]) => shellWord(`${k}=${v}`)).join(' ')} ${program}`;
  }
  const exported = vars.length ? ` && export ${vars.map(([k, v]) => shellWord(`${k}=${v}`)).join(' ')}` : '';
  return `${cd} && unset PATH PWD OLDPWD${exported} && exec ${argv}`;
}

/** What a command run by a server needs from its sandbox: the kill of what it left (a state: ok, or dirty). */
export type Reap = (group: SharedGroup) => Promise<ServerState>;

/**
 * The harness's end of one host server. A command takes it with claim() and gives it back when
 * run() ends; a server that died or broke the protocol is never claimed again.
 */
export class HostServer {
  /** The command being run: how to stop it and reap what it left, and whether that was done. */
  private current: { stop: () => Promise<unknown>; reap: Reap; reaped: boolean } | null = null;
  private busy = false;
  /** The server's process group, which its commands share (0 until its hello said which). */
  readonly group = { pgid: 0, except: new Set<number>() };

  private constructor(
    /** The host shell around it (PIPED), leader of the group its pipes are in. */
    private readonly pid: number,
    private readonly commands: CommandServer,
    private readonly input: NodeJS.WritableStream,
    private readonly gone: Promise<void>,
    private readonly hold: (on: boolean) => void,
  ) {}

  /** A running server, or null when one cannot start here. */
  static async start(): Promise<HostServer | null> {
    if (!existsSync('/proc/self/fd')) return null; // the server reopens its output there
    const argv = ['setsid', '/bin/sh', '-c', HOST_SERVER_SCRIPT, 'redgreen-server'];
    let server: HostServer | null = null;
    let side = '';
    const { pid, input, commands, gone, hold } = spawnServer('/bin/sh', ['-c', PIPED, 'sh', ...argv], {
      cwd: '/',
      env: {},
      name: 'the local command server',
      options: {
        // A command that kills its group (`kill -9 0`) ends the server with it: it was killed.
        diesWithCommand: true,
        words: commandLine,
        stop: () => void server?.current?.stop(),
      },
      onSide: (c) => {
        side += c.toString('latin1');
        for (let nl = side.indexOf('\n'); nl >= 0; nl = side.indexOf('\n')) {
          const [id] = side.slice(0, nl).split(' ');
          side = side.slice(nl + 1);
          void server?.exited(id!);
        }
      },
    });
    if (!pid) {
      await gone;
      return null;
    }
    server = new HostServer(pid, commands, input, gone, hold);
    try {
      const [, , pid] = await commands.hello();
      if (!/^\d+$/.test(pid ?? '')) throw new Error(`the local command server said no pid`);
      server.group.pgid = Number(pid);
      server.group.except.add(Number(pid));
      hold(false);
      return server;
    } catch {
      await server.kill();
      return null;
    }
  }

  /** Takes the server for one command if it is alive and free (synchronous: two commands never both get it). */
  claim(): boolean {
    if (this.busy || this.dead) return false;
    this.busy = true;
    this.hold(true);
    return true;
  }

  /** Gives back a claimed server without running anything on it. */
  release(): void {
    this.busy = false;
    this.hold(false);
  }

  /** Whether it died or broke the protocol: it is never used again. */
  get dead(): boolean {
    return !!this.commands.failure;
  }

  /**
   * Runs a claimed server's command; `stop` ends it early (timeout, abort), `reap` kills what it
   * left once it ended (also when the server died with it, and said nothing).
   */
  async run(req: CommandRequest, stop: () => Promise<unknown>, reap: Reap): Promise<ServerOutcome> {
    const current = (this.current = { stop, reap, reaped: false });
    try {
      const out = await this.commands.run(req);
      if (!current.reaped) out.state = await reap(this.group).catch(() => 'dirty' as const);
      return out;
    } finally {
      this.current = null;
      this.release();
    }
  }

  /** The command's main process ended: what it left is killed, then the server may frame its output. */
  private async exited(id: string): Promise<void> {
    const current = this.current;
    if (!current) return void this.commands.fail(new Error('the local command server ended a command it was not running'));
    current.reaped = true;
    const state = await current.reap(this.group).catch(() => 'dirty' as const);
    this.input.write(`reaped ${id} ${state}\n`);
  }

  /**
   * Ends an idle server the way it ends by itself, at the end of its input: its processes are then
   * waited for by their parents, up to the harness (their CPU time is counted as the harness's
   * children's). One running a command, or dead, is killed.
   */
  async end(): Promise<void> {
    if (!this.claim()) return this.kill();
    this.commands.close();
    await this.gone;
    // What a command left in the server's group that its reap missed goes with it.
    if (this.group.pgid) signal(-this.group.pgid, 'SIGKILL');
    await this.reaped();
  }

  /** Ends the server, its pipes and whatever its command runs. */
  async kill(): Promise<void> {
    this.hold(true);
    if (this.group.pgid) signal(-this.group.pgid, 'SIGKILL');
    signal(-this.pid, 'SIGKILL');
    await this.gone;
    await this.reaped();
  }

  /** Returns once nothing of the server's two groups is left, not even a process still exiting. */
  private async reaped(): Promise<void> {
    await Promise.all([this.group.pgid, this.pid].filter(Boolean).map((g) => groupGone(g)));
  }
}

/**
 * A backend's host servers: one per command running at once, started when a command finds none
 * free and kept for the next. When none can start here (no /proc), commands are spawned as before.
 */
export class HostServers {
  private readonly servers: HostServer[] = [];
  private usable = true;
  private closed = false;

  /** A server claimed for one command, or null: spawn the command. */
  async take(): Promise<HostServer | null> {
    if (!this.usable || this.closed) return null;
    for (const s of this.servers.filter((s) => s.dead)) {
      this.servers.splice(this.servers.indexOf(s), 1);
      void s.kill();
    }
    const idle = this.servers.find((s) => s.claim());
    if (idle) return idle;
    const started = await HostServer.start();
    if (!started) {
      this.usable = false;
      return null;
    }
    if (this.closed) {
      await started.kill();
      return null;
    }
    this.servers.push(started);
    return started.claim() ? started : null;
  }

  /** Ends every server (a command one runs is killed with it: close comes after every sandbox's destroy). */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.servers.splice(0).map((s) => s.end()));
  }
}
