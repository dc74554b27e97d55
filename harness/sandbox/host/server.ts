import { existsSync } from 'node:fs';
import type { CommandRequest, CommandServer, ServerOutcome } from '../core/command-server.js';
import { groupGone, signal } from './kill.js';
import type { PidsAfterExit } from './pid-clock.js';
import { commandLine, PIPED, SIDE_FD, spawnServer } from './server-process.js';

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

/**
 * The harness's end of one host server. A command takes it with claim() and gives it back when
 * run() ends; a server that died or broke the protocol is never claimed again.
 */
export class HostServer {
  /** The command being run: the kill of it and of what it left, and whether what it left was killed. */
  private current: { kill: CommandKill; reaped: boolean } | null = null;
  private busy = false;
  /** The server's process group, which its commands share: the server's pid (0 until its hello said it). */
  pgid = 0;

  private constructor(
    /** The host shell around it (PIPED), leader of the group its pipes are in. */
    private readonly pid: number,
    /** Whether the numbers of its groups are still its own (a server found dead long after it ended). */
    private readonly afterExit: PidsAfterExit,
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
    const { pid, input, commands, gone, afterExit, hold } = spawnServer('/bin/sh', ['-c', PIPED, 'sh', ...argv], {
      cwd: '/',
      env: {},
      name: 'the local command server',
      options: {
        // A command that kills its group (`kill -9 0`) ends the server with it: it was killed.
        diesWithCommand: true,
        words: commandLine,
        stop: () => void server?.current?.kill.run(),
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
    server = new HostServer(pid, afterExit, commands, input, gone, hold);
    try {
      const [, , pid] = await commands.hello();
      if (!/^\d+$/.test(pid ?? '')) throw new Error(`the local command server said no pid`);
      server.pgid = Number(pid);
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
   * Runs a claimed server's command. `kill` kills it and what it left: it stops it early (timeout,
   * abort), and reaps what it left once it ended (also when the server died with it, and said
   * nothing). The server is given back only once every call of it is done: a kill takes any member
   * of the server's group but the server for the command's, and the next command joins that group.
   */
  async run(req: CommandRequest, kill: CommandKill): Promise<ServerOutcome> {
    const current = (this.current = { kill, reaped: false });
    try {
      const out = await this.commands.run(req);
      if (!current.reaped) out.state = await kill.run();
      return out;
    } finally {
      await kill.end();
      this.current = null;
      this.release();
    }
  }

  /** The command's main process ended: what it left is killed, then the server may frame its output. */
  private async exited(id: string): Promise<void> {
    const current = this.current;
    if (!current) return void this.commands.fail(new Error('the local command server ended a command it was not running'));
    current.reaped = true;
    this.input.write(`reaped ${id} ${await current.kill.run()}\n`);
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
    const groups = this.groups();
    if (this.pgid && groups.length) signal(-this.pgid, 'SIGKILL');
    await this.groupsGone(groups);
  }

  /** Ends the server, its pipes and whatever its command runs. */
  async kill(): Promise<void> {
    this.hold(true);
    const groups = this.groups();
    for (const g of groups) signal(-g, 'SIGKILL');
    await this.gone;
    await this.groupsGone(groups);
  }

  /** The server's two groups (its own and its host shell's) while their numbers are still theirs (PidsAfterExit). */
  private groups(): number[] {
    return this.afterExit.ours ? [this.pgid, this.pid].filter(Boolean) : [];
  }

  /** Returns once nothing of `groups` is left, not even a process still exiting. */
  private async groupsGone(groups: number[]): Promise<void> {
    await Promise.all(groups.map((g) => groupGone(g)));
    this.afterExit.done();
  }
}

/**
 * The kill of one command run by a host server, whoever calls it (its timeout, its end, a destroy),
 * with the calls still under way; once the command is over (end), it does nothing more.
 */
export class CommandKill {
  private readonly calls = new Set<Promise<'ok' | 'dirty'>>();
  private over = false;

  constructor(private readonly kill: () => Promise<unknown>) {}

  /** Kills the command and what it left; says ok, or dirty when the kill failed. */
  run(): Promise<'ok' | 'dirty'> {
    if (this.over) return Promise.resolve('ok');
    const call = this.kill().then(
      () => 'ok' as const,
      () => 'dirty' as const,
    );
    this.calls.add(call);
    void call.then(() => this.calls.delete(call));
    return call;
  }

  /** Waits for every call under way, then ends. */
  async end(): Promise<void> {
    while (this.calls.size) await Promise.all(this.calls);
    this.over = true;
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
