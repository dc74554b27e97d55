import type Docker from 'dockerode';
import { CommandServer } from '../core/command-server.js';
import type { ServerLink } from './link.js';
import { demux, streamEnded } from './stream.js';

/** A container's command server (server-script.ts), started: whether the sandbox's folders were empty then (a reset can restore that). */
export interface ContainerServer {
  server: CommandServer;
  fresh: boolean;
  /**
   * What became of a link offered (link.ts): `linked`, it speaks through its FIFOs; `unreachable`,
   * it found them without the harness at the other end (the engine shows another copy of the
   * folder); `ignored`, it does not take links (the sh server), or none was offered.
   */
  link: 'linked' | 'unreachable' | 'ignored';
}

/**
 * Attaches to a created container, starts it and reads its server's hello. Null when the image
 * lacks what the server needs: the container then runs a plain sleep, and commands go through
 * the Exec API. A timeout or an abort asks the server to kill the command, which then frames it.
 * With a link offered (the container mounts it), a server that opened it is spoken to there.
 */
export async function startContainerServer(
  docker: Docker,
  container: Docker.Container,
  link: ServerLink | null = null,
): Promise<ContainerServer | null> {
  const stream = (await container.attach({
    stream: true,
    stdin: true,
    stdout: true,
    stderr: true,
    hijack: true,
  })) as NodeJS.ReadWriteStream;
  const server = new CommandServer(stream);
  stream.on('error', () => undefined); // its end is handled below, whichever way it is reported
  demux(docker, stream, (name, chunk) => server.push(name, chunk));
  void streamEnded(stream).then(() => server.ended('the command server in the container ended'));
  const hello = server.hello();
  try {
    await container.start();
    const [mode, fresh, line] = await hello;
    if (mode === 'ready') {
      if (line !== 'link' || !link) return { server, fresh: fresh === '1', link: line === 'nolink' ? 'unreachable' : 'ignored' };
      // The server has left the attach stream for the FIFOs; closing it ends only the container's stdin.
      server.close();
      return { server: linkedServer(link), fresh: fresh === '1', link: 'linked' };
    }
    if (mode === 'keeper') {
      server.close();
      return null;
    }
    throw new Error(`the command server said ${JSON.stringify(mode)}`);
  } catch (e) {
    // Removed before its input closes: Podman does not remove a container stopping on its own.
    await container.remove({ force: true }).catch(() => undefined);
    server.close();
    throw e;
  }
}

/** The server over its FIFOs: it ends when both its outputs have (every byte pushed); closing it closes them all. */
function linkedServer(link: ServerLink): CommandServer {
  // Reads come in on a later turn of the event loop, once the server below exists.
  let server: CommandServer | undefined;
  const { input, stdout, stderr } = link.connect((name, chunk) => server!.push(name, chunk));
  server = new CommandServer(input);
  for (const s of [input, stdout, stderr]) s.on('error', () => undefined); // an end is handled below
  void Promise.all([streamEnded(stdout), streamEnded(stderr)]).then(() => server.ended('the command server in the container ended'));
  input.once('close', () => {
    stdout.destroy();
    stderr.destroy();
  });
  return server;
}
