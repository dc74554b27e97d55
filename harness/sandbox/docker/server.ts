import type Docker from 'dockerode';
import { CommandServer } from '../core/command-server.js';
import { demux, streamEnded } from './stream.js';

/** A container's command server (server-script.ts), started: whether the sandbox's folders were empty then (a reset can restore that). */
export interface ContainerServer {
  server: CommandServer;
  fresh: boolean;
}

/**
 * Attaches to a created container, starts it and reads its server's hello. Null when the image
 * lacks what the server needs: the container then runs a plain sleep, and commands go through
 * the Exec API. A timeout or an abort asks the server to kill the command, which then frames it.
 */
export async function startContainerServer(docker: Docker, container: Docker.Container): Promise<ContainerServer | null> {
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
    const [mode, fresh] = await hello;
    if (mode === 'ready') return { server, fresh: fresh === '1' };
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
