import { Writable } from 'node:stream';
import type Docker from 'dockerode';
import { OutputCapture } from '../core/capture.js';
import type { OutputStream } from '../core/types.js';

/** Docker frames stdout and stderr on one connection: split into two sinks. */
export function demux(docker: Docker, stream: NodeJS.ReadableStream, sink: (name: OutputStream, chunk: Buffer) => void): void {
  const writable = (name: OutputStream) =>
    new Writable({
      write: (chunk: Buffer, _enc, done) => {
        sink(name, chunk);
        done();
      },
    });
  docker.modem.demuxStream(stream, writable('stdout'), writable('stderr'));
}

/** Resolves once a hijacked connection has ended, whichever way it reports that ('end', 'close' or an error when the engine went away). */
export function streamEnded(stream: NodeJS.ReadableStream): Promise<void> {
  return new Promise<void>((resolve) => {
    stream.once('end', resolve);
    stream.once('close', resolve);
    stream.once('error', resolve);
  }).then(() => {
    // A hijacked connection may stay half-open after the engine's end: close our side too.
    (stream as NodeJS.ReadableStream & { destroy?: () => void }).destroy?.();
  });
}

/** One exec's or container's output, collected until the engine closes its stream. */
export class ExecOutput extends OutputCapture {
  readonly ended: Promise<void>;

  constructor(
    docker: Docker,
    stream: NodeJS.ReadableStream,
    maxOutputBytes: number | undefined,
    onOutput?: (stream: OutputStream, chunk: Buffer) => void,
    started = performance.now(),
  ) {
    super(maxOutputBytes, onOutput, started);
    demux(docker, stream, (name, chunk) => this.push(name, chunk));
    this.ended = streamEnded(stream);
  }
}
