/**
 * TEST DOUBLE of E2B (see README.md): envd's `process.Process` Connect service. Start and Connect
 * stream ProcessEvents (start, base64 data, end, keep-alive); a dropped stream leaves the process
 * running, as envd does; SendSignal is how a client kills one.
 */
import { existsSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ConnectFailure, parseEnvelopedRequest, readBody, sendUnary, ServerStream } from './connect.js';
import type { Faults } from './faults.js';
import { signalProcess, startProcess, type DoubleProcess, type EndEvent } from './processes.js';
import type { DoubleSandbox, Registry } from './state.js';

export interface EnvdContext {
  sb: DoubleSandbox;
  user: string;
  home: string;
  registry: Registry;
  faults: Faults;
  /** A path as the sandbox sees it (relative to the user's home), confined to the sandbox's folder. */
  resolve(p: string): string;
}

const SIGNALS: Record<string, NodeJS.Signals> = { SIGNAL_SIGKILL: 'SIGKILL', SIGNAL_SIGTERM: 'SIGTERM', '9': 'SIGKILL', '15': 'SIGTERM' };

function selectProcess(sb: DoubleSandbox, selector: unknown): DoubleProcess {
  const s = (selector ?? {}) as { pid?: number; tag?: string };
  const p = s.pid !== undefined ? sb.processes.get(Number(s.pid)) : [...sb.processes.values()].find((x) => x.tag === s.tag);
  if (!p) throw new ConnectFailure('not_found', `process ${s.pid ?? s.tag} not found`);
  return p;
}

/** Streams a process's events to one client until it ends or the client goes away. */
function follow(req: IncomingMessage, res: ServerResponse, ctx: EnvdContext, p: DoubleProcess, cmdText: string): void {
  const stream = new ServerStream(res);
  const conn = { cut: () => stream.cut() };
  ctx.sb.connections.add(conn);
  stream.send({ event: { start: { pid: p.pid } } });
  const pingSec = Number(req.headers['keepalive-ping-interval'] ?? 0);
  const ping = pingSec > 0 ? setInterval(() => stream.send({ event: { keepalive: {} } }), pingSec * 1000) : undefined;
  const cutOn = ctx.faults.cutStreamOn;
  const onData = (name: 'stdout' | 'stderr', chunk: Buffer) => {
    stream.send({ event: { data: { [name]: chunk.toString('base64') } } });
    if (cutOn && cmdText.includes(cutOn.match)) stream.cut();
  };
  const onEnd = (r: EndEvent) => {
    stream.send({ event: { end: { exitCode: r.exitCode, exited: r.exited, status: r.status } } });
    stream.end();
    detach();
  };
  const detach = () => {
    clearInterval(ping);
    p.events.off('data', onData);
    p.events.off('end', onEnd);
    ctx.sb.connections.delete(conn);
  };
  // The client went away (aborted, cut): stop streaming; the process keeps running.
  res.on('close', detach);
  if (p.result) return onEnd(p.result);
  p.events.on('data', onData);
  p.events.on('end', onEnd);
}

export async function processService(method: string, req: IncomingMessage, res: ServerResponse, ctx: EnvdContext): Promise<void> {
  const body = await readBody(req);
  switch (method) {
    case 'Start': {
      const r = parseEnvelopedRequest(body) as {
        process?: { cmd?: string; args?: string[]; envs?: Record<string, string>; cwd?: string };
        stdin?: boolean;
        tag?: string;
      };
      const cfg = r.process;
      if (!cfg?.cmd) throw new ConnectFailure('invalid_argument', 'process.cmd is required');
      const cmdText = [cfg.cmd, ...(cfg.args ?? [])].join(' ');
      if (ctx.faults.refuseStartOn && cmdText.includes(ctx.faults.refuseStartOn.match))
        throw new ConnectFailure('unavailable', 'test double: refusing to start this command');
      const cwd = cfg.cwd ? ctx.resolve(cfg.cwd) : ctx.home;
      if (!existsSync(cwd)) throw new ConnectFailure('invalid_argument', `cwd '${cfg.cwd}' does not exist`);
      const p = startProcess(
        ctx.sb,
        ctx.user,
        ctx.home,
        { cmd: cfg.cmd, args: cfg.args ?? [], envs: cfg.envs ?? {}, cwd },
        Boolean(r.stdin),
        r.tag,
      );
      ctx.registry.events.emit('start', ctx.sb.id, cmdText);
      const die = ctx.faults.dieOn;
      if (die && cmdText.includes(die.match)) {
        setTimeout(() => void ctx.registry.kill(ctx.sb.id, 'fault: died mid-run'), die.afterMs ?? 0);
      }
      return follow(req, res, ctx, p, cmdText);
    }
    case 'Connect': {
      const r = parseEnvelopedRequest(body) as { process?: unknown };
      return follow(req, res, ctx, selectProcess(ctx.sb, r.process), '');
    }
    case 'SendSignal': {
      const r = JSON.parse(body.toString('utf8') || '{}') as { process?: unknown; signal?: string | number };
      const sig = SIGNALS[String(r.signal)];
      if (!sig) throw new ConnectFailure('invalid_argument', `unsupported signal ${r.signal}`);
      signalProcess(selectProcess(ctx.sb, r.process), sig);
      return sendUnary(res, {});
    }
    case 'SendInput': {
      const r = JSON.parse(body.toString('utf8') || '{}') as { process?: unknown; input?: { stdin?: string } };
      selectProcess(ctx.sb, r.process).child.stdin?.write(Buffer.from(r.input?.stdin ?? '', 'base64'));
      return sendUnary(res, {});
    }
    case 'CloseStdin': {
      const r = JSON.parse(body.toString('utf8') || '{}') as { process?: unknown };
      selectProcess(ctx.sb, r.process).child.stdin?.end();
      return sendUnary(res, {});
    }
    case 'List':
      return sendUnary(res, {
        processes: [...ctx.sb.processes.values()].map((p) => ({
          config: { cmd: p.config.cmd, args: p.config.args, envs: p.config.envs, ...(p.config.cwd ? { cwd: p.config.cwd } : {}) },
          pid: p.pid,
          ...(p.tag ? { tag: p.tag } : {}),
        })),
      });
    default:
      throw new ConnectFailure('unknown', `process.Process/${method} is not implemented by the test double`);
  }
}
