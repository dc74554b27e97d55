/**
 * TEST HELPER: a recording HTTP proxy in front of the E2B test double. It keeps every request
 * (method, path with query, headers, body) and forwards it unchanged, streaming the answer back,
 * so the requests two clients make for the same operations can be compared.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Recorded {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export interface Recorder {
  url: string;
  requests: Recorded[];
  close(): Promise<void>;
}

export async function recordingProxy(target: string): Promise<Recorder> {
  const to = new URL(target);
  const requests: Recorded[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const headers = { ...req.headers, host: to.host };
      // The body was read whole: send it with its length, whatever framing it came with.
      delete headers['transfer-encoding'];
      headers['content-length'] = String(body.length);
      const up = http.request({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      up.on('error', () => res.destroy());
      up.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
