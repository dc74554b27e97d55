import net from 'node:net';

/**
 * A unix socket that a fixture's test connects to when it runs, so that a test can act at a
 * moment it observed (kill the harness, press Ctrl-C) instead of after a guessed delay. When
 * nobody listens (an ordinary run) the connection fails at once and the fixture's test goes on.
 */
export interface ReadySocket {
  /** Resolves at the first connection. */
  connected: Promise<void>;
  /** Lets go of every test held on the socket and stops listening. */
  close(): void;
}

export function listenReady(file: string): ReadySocket {
  const held = new Set<net.Socket>();
  const server = net.createServer((c) => void held.add(c.on('error', () => undefined).on('close', () => held.delete(c))));
  const connected = new Promise<void>((resolve) => server.once('connection', () => resolve()));
  server.listen(file);
  return {
    connected,
    close: () => {
      for (const c of held) c.destroy();
      server.close();
    },
  };
}

/**
 * Python statements for a test function's body that connect to `file` if someone listens; with
 * `hold`, the test then waits until the listener lets go, so it cannot finish before the test
 * that listens has acted.
 */
export function pythonNotify(file: string, opts: { hold?: boolean } = {}): string {
  const lines = ['import socket', 's = socket.socket(socket.AF_UNIX)', 'try:', `    s.connect(${JSON.stringify(file)})`];
  if (opts.hold) lines.push('    s.recv(1)');
  lines.push('except OSError:', '    pass', 's.close()');
  return lines.map((l) => `    ${l}\n`).join('');
}
