import { readFileSync } from 'node:fs';
import type { CommandRequest, CommandServer, ServerOutcome } from '../core/command-server.js';
import { PSTATE_FUNCTION } from '../core/kill-script.js';
import { signal } from '../host/kill.js';
import type { PidsAfterExit } from '../host/pid-clock.js';
import { commandLine, SIDE_FD, spawnServer, type ServedEnv } from '../host/server-process.js';
import { SERVER_SHELL } from './args.js';

/**
 * The command server of a bwrap sandbox: one bubblewrap for the sandbox's life (its namespaces
 * and mounts made once, not per command: they cost a small command's time several times over),
 * whose init is this POSIX sh loop. It runs one command at a time, as the harness asks on its
 * input (`run <id> <token> <shell line>`, the line as host/server-process.ts's commandLine writes it: into
 * the command's folder, exactly its variables, exec), in a subshell with default signal handling,
 * and frames each one's output (core/frames.ts) once the command has ended and nothing it
 * started is left: `<token> <id> <exit code> <state> - - -` on stdout, `<token> <id>` on stderr
 * (state: ok, or dirty when something could not be killed; the limit fields are read on the host).
 * The init of a namespace cannot be signalled from inside it, so a command cannot stop the
 * server, even with `kill -9 -1`; what a command leaves is killed by pid (anything but the
 * server), and whatever it re-parents to the server is reaped as the server waits. Commands run as
 * the server's own user, yet none can reach into the server: it runs from a copy of /bin/sh that
 * only the kernel can read (args.ts's SERVER_SHELL, mode 0111), which makes it not dumpable, so a
 * command without capabilities can neither ptrace it nor open its memory or its fds through /proc
 * (where a frame's token, or the server that serves later commands and sandboxes, could be had).
 * It starts by saying `redgreen-server ready 1`.
 */
export const BWRAP_SERVER_SCRIPT = `cd /
echo 'redgreen-server ready 1'
NL='
'
${PSTATE_FUNCTION}
IFS= read -r _ || exit
while IFS= read -r req; do
  kind=\${req%% *}; rest=\${req#* }; id=\${rest%% *}; rest=\${rest#* }; tok=\${rest%% *}; line=\${rest#* }
  [ "$kind" = run ] || exit 3
  (eval "$line") </dev/null >/proc/self/fd/1 2>/proc/self/fd/2
  code=$? state=dirty n=0
  while [ $n -lt 1000 ]; do
    live=
    for d in /proc/[0-9]*; do
      p=\${d#/proc/}
      [ "$p" = 1 ] && continue
      pstate "$p"
      case $st in '' | Z | X) ;; *) live=1; kill -9 "$p" 2>/dev/null ;; esac
    done
    [ -n "$live" ] || { state=ok; break; }
    n=$((n+1))
  done
  printf '%s %s %s %s - - -\\n' "$tok" "$id" "$code" "$state"
  printf '%s %s\\n' "$tok" "$id" >&2
done`;

/** The server as its namespace's init (bwrap --as-pid-1), named in process lists by $0. */
export const BWRAP_SERVER_ARGV = [SERVER_SHELL, '-c', BWRAP_SERVER_SCRIPT, 'redgreen-server'];

/** The fd the host command gives bwrap the host's /bin/sh on, for SERVER_SHELL. */
export const SHELL_FD = 5;

/** The children of a process (Linux /proc/<pid>/task/<pid>/children); none if it cannot tell. */
function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'latin1').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/**
 * Kills what a bwrap process (pid) runs: its namespace's init, whose end makes the kernel kill and
 * reap everything else in the namespace before bwrap reports its exit. False before bwrap has
 * started its init: then there is only bwrap itself to kill.
 */
export function killNamespaceOf(pid: number): boolean {
  const inits = childrenOf(pid);
  for (const init of inits) signal(init, 'SIGKILL');
  return inits.length > 0;
}

/** The fd (of the host command) bwrap writes its JSON info to: the init's pid (PIPED gives it to bwrap only). */
export const INFO_FD = SIDE_FD;

/**
 * The harness's end of a running server: the host command around its bwrap, whose pipes carry the
 * frames. A command is stopped (timeout, abort) by ending the whole namespace; so is the server
 * when it dies or breaks the protocol: the sandbox then starts another for its next command.
 */
export class BwrapServer {
  /** The namespace's init (the server), as bwrap reports it on INFO_FD. */
  private init: number | null = null;

  /** The variables in the file its commands' lines source (set by its sandbox; a kept server keeps them). */
  served?: ServedEnv;

  private constructor(
    private readonly pid: number,
    private readonly commands: CommandServer,
    /** Settles once the host command has exited and its pipes are closed: nothing of the namespace is left. */
    private readonly gone: Promise<void>,
    /** Whether it keeps the harness process alive (host/server-process.ts): not while it waits idle. */
    private readonly hold: (on: boolean) => void,
    /** Whether the init's and the host command's numbers are still theirs (a server found dead long after it ended). */
    private readonly afterExit: PidsAfterExit,
  ) {}

  /**
   * Starts `file args` (a shell running PIPED around bwrap --info-fd INFO_FD … --
   * BWRAP_SERVER_ARGV) and reads its hello; null when it did not start.
   */
  static async start(file: string, args: readonly string[], cwd: string, env: Record<string, string>): Promise<BwrapServer | null> {
    let server: BwrapServer | null = null;
    let info = '';
    const { pid, commands, gone, hold, afterExit } = spawnServer(file, args, {
      cwd,
      env,
      name: 'the bwrap command server',
      options: { diesWithCommand: true, words: commandLine, stop: () => server?.stop() },
      onSide: (c) => {
        info += c.toString('latin1');
        const m = /"child-pid":\s*(\d+)/.exec(info);
        if (m && server && !server.init) server.init = Number(m[1]);
      },
    });
    if (!pid) {
      await gone;
      return null;
    }
    server = new BwrapServer(pid, commands, gone, hold, afterExit);
    try {
      const [mode] = await commands.hello();
      if (mode === 'ready') {
        hold(false);
        return server;
      }
    } catch {
      // ended before its hello: bwrap could not start it
    }
    await server.kill();
    return null;
  }

  /** Taken by a command from claim() until its run() ends. */
  private busy = false;

  /**
   * Takes the server for one command if it is alive and free; synchronous, so two commands asking
   * at once never both get it. The command must then go to run(), which frees it when done.
   */
  claim(): boolean {
    if (this.dead || this.busy || this.commands.pending > 0) return false;
    this.busy = true;
    this.hold(true);
    return true;
  }

  /** Being killed (a timeout, a destroy): no command may take it any more. */
  private stopping = false;

  /** Whether it died, broke the protocol or is being killed (it must be replaced). */
  get dead(): boolean {
    return this.stopping || !!this.commands.failure;
  }

  async run(req: CommandRequest): Promise<ServerOutcome> {
    try {
      return await this.commands.run(req);
    } finally {
      this.busy = false;
      this.hold(false);
    }
  }

  /** Ends the namespace through its init; before bwrap has said which that is, the whole host command. */
  private stop(): void {
    if (!this.afterExit.ours) return;
    if (this.init) signal(this.init, 'SIGKILL');
    else signal(-this.pid, 'SIGKILL');
  }

  /**
   * Ends the server and everything in its namespace; resolves once nothing of it is left. A command
   * it was running ends as killed (exit 137), as a local command does at destroy.
   */
  async kill(): Promise<void> {
    this.stopping = true;
    this.hold(true);
    this.stop();
    await this.gone;
    this.afterExit.done();
  }
}
