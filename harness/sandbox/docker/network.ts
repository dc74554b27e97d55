import type Docker from 'dockerode';
import { RedgreenError } from '../../errors.js';
import { engineFailure, envList } from './client.js';
import { containerOptions, SANDBOX_USER, type ContainerPlan } from './config.js';
import { newMarker, wrapped, type CommandRequest } from './exec.js';
import { EXEC_MARKER_VAR } from '../core/kill-script.js';
import { ExecOutput, stopper } from './stream.js';
import type { ExecResult } from '../core/types.js';

/**
 * The network a command that opted into network (a setup phase installing dependencies) gets:
 * the engine's default `bridge` when it has one (NAT, no access to the host's loopback), else
 * `host` — an engine started with `--bridge=none` has nothing else.
 */
export async function resolveSetupNetwork(docker: Docker, preferred?: string): Promise<string> {
  if (preferred) return preferred;
  try {
    const nets = await docker.listNetworks();
    return nets.some((n) => n.Name === 'bridge') ? 'bridge' : 'host';
  } catch (e) {
    throw engineFailure('list networks', e);
  }
}

export interface NetworkRunRequest extends CommandRequest {
  plan: Omit<ContainerPlan, 'cmd' | 'env' | 'workingDir' | 'user'>;
  /** Tracks the container so the sandbox's destroy() can remove it while it runs. */
  track: (c: Docker.Container, running: boolean) => void;
  /** Whether the sandbox was destroyed: the container vanishing is then a killed command. */
  stopped: () => boolean;
}

/**
 * Runs one command with network in a short-lived container beside the sandbox: same image,
 * limits, user and environment, the same volume (workspace, scratch, HOME), but its own network.
 * The sandbox's container keeps network `none`. Killing this container (timeout, abort) stops
 * every process the command started; when the command ends, so does the container.
 */
export async function runWithNetwork(docker: Docker, req: NetworkRunRequest): Promise<ExecResult> {
  const started = performance.now();
  let container: Docker.Container;
  try {
    container = await docker.createContainer(
      containerOptions({
        ...req.plan,
        user: SANDBOX_USER,
        cmd: wrapped(req.argv),
        env: envList({ ...req.env, [EXEC_MARKER_VAR]: newMarker() }),
        workingDir: req.cwd,
      }),
    );
  } catch (e) {
    throw engineFailure('create setup container', e);
  }
  req.track(container, true);
  try {
    const stream = await container.attach({ stream: true, stdout: true, stderr: true, hijack: true });
    const out = new ExecOutput(docker, stream, req.maxOutputBytes, req.onOutput, started);
    const stop = stopper(req, () => void container.kill().catch(() => undefined));
    try {
      await container.start();
      // A timeout or abort before the start could not kill anything yet: kill now.
      if (stop.state.timedOut || stop.state.aborted) await container.kill().catch(() => undefined);
      // After start, "not-running" is either now (it already ended) or when it ends.
      const status = (await container.wait({ condition: 'not-running' }).catch((e: unknown) => e as Error)) as
        { StatusCode: number } | Error;
      await out.ended;
      if (status instanceof Error) {
        if (req.stopped()) return out.result(137, stop.state);
        throw status;
      }
      return out.result(status.StatusCode, stop.state);
    } finally {
      stop.dispose();
    }
  } catch (e) {
    if (req.stopped())
      throw new RedgreenError('SANDBOX_DESTROYED', 'the sandbox was destroyed while a command with network was starting', undefined, {
        cause: e,
      });
    throw engineFailure('run setup container', e);
  } finally {
    await container.remove({ force: true }).catch(() => undefined);
    req.track(container, false);
  }
}
