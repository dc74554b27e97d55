import { chmodSync, closeSync, constants, mkdirSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type Docker from 'dockerode';
import { LINK_FOLDER_PREFIX, ownedFolderPrefix } from '../core/owner.js';
import { runTool } from '../core/tool.js';

/*
 * A direct line between the harness and a container's command server, past the engine: three
 * FIFOs in a host folder mounted into the container at LINK_MOUNT (config.ts). Through the attach
 * stream every request and every chunk of output passes the engine and its shim (on a small
 * fixture, about a sixth of the machine's CPU); a FIFO is the kernel alone. The server opens the
 * FIFOs when it starts, before anything of a sandbox runs, says so in its hello (on the attach
 * stream) and moves its input and output onto them; the harness then removes the folder, so no
 * later process can open them. A FIFO is what the attach stream gives the server too: a command
 * inherits a write end it can neither read from nor shut down.
 *
 * Only where the engine sees this host's files (a local unix socket). Where it does not see them
 * live (a VM between), the server finds no reader at the other end and says nothing of a link;
 * where it cannot mount the folder (a remote engine), the container is made again without one
 * (container.ts). Either way the attach stream serves as before.
 */

/** The harness's ends of one container's FIFOs, not yet known to be used. */
export interface ServerLink {
  /** The host folder to mount at LINK_MOUNT. */
  dir: string;
  /**
   * The server's input (requests), and its outputs, each read of which goes to `onOutput` as it
   * comes (the chunk is the caller's: each read has its own).
   */
  connect(onOutput: (name: 'stdout' | 'stderr', chunk: Buffer) => void): { input: net.Socket; stdout: net.Socket; stderr: net.Socket };
  /** Removes the folder (the FIFOs stay open where they are), and closes the ends not connected. */
  release(): void;
}

/** Whether an engine may see this host's files: a local unix socket on Linux. */
export function linkable(docker: Docker): boolean {
  return process.platform === 'linux' && typeof (docker.modem as { socketPath?: unknown }).socketPath === 'string';
}

/**
 * Makes the FIFOs and opens the harness's ends without waiting for the server: its output ends
 * for reading, its input end for reading and writing (a FIFO with no writer reads as ended, and
 * the server opens its end before the harness could write).
 */
export async function openLink(): Promise<ServerLink> {
  // The outer folder keeps the host's other users out; the inner one (mounted) lets the container's
  // root, whatever host user it is, reach FIFOs open to all of it for the moment they exist.
  const outer = mkdtempSync(path.join(tmpdir(), ownedFolderPrefix(LINK_FOLDER_PREFIX)));
  unreleased.add(outer);
  const dir = path.join(outer, 'fifos');
  const fds: number[] = [];
  try {
    mkdirSync(dir);
    chmodSync(dir, 0o711);
    const [input, stdout, stderr] = ['in', 'out', 'err'].map((n) => path.join(dir, n));
    const made = await runTool('mkfifo', ['-m', '0666', input!, stdout!, stderr!]);
    if (made.code !== 0) throw new Error(`mkfifo failed: ${made.error ?? made.stderr.trim()}`);
    fds.push(openSync(stdout!, constants.O_RDONLY | constants.O_NONBLOCK));
    fds.push(openSync(stderr!, constants.O_RDONLY | constants.O_NONBLOCK));
    fds.push(openSync(input!, constants.O_RDWR | constants.O_NONBLOCK));
  } catch (e) {
    for (const fd of fds) closeSync(fd);
    removeFolder(outer);
    throw e;
  }
  let open = true;
  return {
    dir,
    connect(onOutput) {
      if (!open) throw new Error('the link was released');
      open = false;
      const [out, err, input] = fds;
      return {
        input: new net.Socket({ fd: input!, readable: false, writable: true }),
        stdout: outputSocket(out!, (chunk) => onOutput('stdout', chunk)),
        stderr: outputSocket(err!, (chunk) => onOutput('stderr', chunk)),
      };
    },
    release() {
      removeFolder(outer);
      if (open) for (const fd of fds) closeSync(fd);
      open = false;
    },
  };
}

/** What one read of an output FIFO takes at most (a pipe's default capacity). */
const READ_BYTES = 64 * 1024;

/**
 * An output FIFO's socket, each read handed to `onChunk` from one buffer of its own (Node's
 * `onread`): a command's frames skip the readable stream's buffering and events, which cost more
 * than the read on a small fixture. It still ends ('end', 'close') as any socket does; it never
 * emits 'data'.
 */
function outputSocket(fd: number, onChunk: (chunk: Buffer) => void): net.Socket {
  const buffer = Buffer.allocUnsafe(READ_BYTES);
  const onread: net.OnReadOpts = {
    buffer,
    callback: (n) => {
      onChunk(Buffer.from(buffer.subarray(0, n)));
      return true;
    },
  };
  // @types/node knows `onread` only for connect(); Node's Socket takes it from its constructor too.
  const socket = new net.Socket({ fd, readable: true, writable: false, onread } as net.SocketConstructorOpts);
  socket.resume();
  return socket;
}

/** Link folders not yet removed: a process that exits while a container starts (Ctrl-C) removes them too. */
const unreleased = new Set<string>();
process.once('exit', () => unreleased.forEach(removeFolder));

function removeFolder(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  unreleased.delete(dir);
}
