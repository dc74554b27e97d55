import { spawn } from 'node:child_process';
import type { Socket } from 'node:net';
import { CommandServer, shellWord, type CommandRequest, type CommandServerOptions } from '../core/command-server.js';
import { PidsAfterExit } from './pid-clock.js';

// What the two POSIX sh command servers on this host share (the local backend's, server.ts, and
// bwrap's, in its namespaces): their process, its pipes, and the request line they evaluate.

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
  /** Whether the numbers of its process and groups are still its own, counted from its exit (Node reaped it). */
  afterExit: PidsAfterExit;
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
  const afterExit = new PidsAfterExit();
  child.once('exit', () => afterExit.exited());
  child.once('error', () => afterExit.exited());
  // Node's pipes to a child are sockets: they can stop holding the event loop as the child can.
  const handles: { ref(): unknown; unref(): unknown }[] = [child, ...(child.stdio.slice(0, SIDE_FD + 1) as unknown as Socket[])];
  const hold = (on: boolean) => handles.forEach((h) => (on ? h.ref() : h.unref()));
  return { pid: child.pid, input: child.stdin, commands, gone, afterExit, hold };
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The file's name in a sandbox's root folder (kept there when the folder is reused: roots.ts). */
export const SERVED_ENV_FILE = 'env.sh';

/**
 * A sandbox's own variables, written once as a file of exports that each of its commands' lines
 * sources: a server's shell reads its request line a byte at a time (dash's `read` on a pipe), so
 * a line that names only what differs is shorter by the whole environment (about 1 KB a command).
 */
export interface ServedEnv {
  file: string;
  vars: Record<string, string>;
}

/**
 * Whether a variable goes in the file: a name the shell can export, and not the servers' own NL
 * (the request line's words spell a newline "$NL": sourced, it would change what they expand to).
 */
const inFile = (name: string) => NAME.test(name) && name !== 'NL';

/** The file of a ServedEnv: one export of the variables it holds, quoted as in a file (newlines as they are). */
export function servedEnvScript(vars: Record<string, string>): string {
  const words = Object.entries(vars)
    .filter(([k]) => inFile(k))
    .map(([k, v]) => `'${`${k}=${v}`.replace(/'/g, `'\\''`)}'`);
  return words.length ? `export ${words.join(' ')}\n` : '';
}

/**
 * The shell line of a request, for a server's subshell to eval: into the folder, exactly the
 * command's variables (a server passes on none of its own: its PATH and the shell's PWD and
 * OLDPWD go), then exec; every value single-quoted. With a `base`, its file is sourced and the
 * line names only the variables that differ from it. A command without PATH, or with a variable
 * whose name the shell cannot export, goes through `env -i`, and so does a program whose name
 * holds "=" (through sh's exec: env would take it for a variable). The harness's own commands
 * (`internal`) run as they are, in the server's environment and folder; a script of its own
 * (`/bin/sh -c <script>`) is evaluated by the subshell itself.
 */
export function commandLine(req: Pick<CommandRequest, 'argv' | 'env' | 'cwd' | 'internal'> & { base?: ServedEnv }): string {
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
  const base = req.base;
  const changed = base ? vars.filter(([k, v]) => !inFile(k) || base.vars[k] !== v) : vars;
  const dropped = base ? Object.keys(base.vars).filter((k) => inFile(k) && !(k in req.env)) : [];
  const sourced = base ? ` && . ${shellWord(base.file)}` : '';
  const unset = dropped.length ? ` && unset ${dropped.join(' ')}` : '';
  const exported = changed.length ? ` && export ${changed.map(([k, v]) => shellWord(`${k}=${v}`)).join(' ')}` : '';
  return `${cd} && unset PATH PWD OLDPWD${sourced}${unset}${exported} && exec ${argv}`;
}
