import type Docker from 'dockerode';
import { describeError, RedgreenError } from '../../errors.js';
import { engineFailure, envList, profileOf, statusOf } from './client.js';
import { containerOptions, SANDBOX_USER, type ContainerPlan } from './config.js';
import { newMarker, wrapped } from './exec.js';
import type { CommandRequest } from '../core/command-server.js';
import { EXEC_MARKER_VAR } from '../core/kill-script.js';
import { LABEL } from './labels.js';
import { stopper } from '../core/capture.js';
import { ExecOutput } from './stream.js';
import type { ExecResult } from '../core/types.js';

/** The bridge redgreen creates on an engine that has no default one (`dockerd --bridge=none`). */
export const SETUP_NETWORK = 'redgreen';
/** Marks that bridge as redgreen's: shared by every run on the engine, so gc leaves it (like the runtime image). */
export const SETUP_NETWORK_LABEL = { [LABEL.role]: 'setup-network' } as const;

/** Network modes that would hand a command another namespace's network, the host's loopback included. */
const SHARED = /^(host|container:.*)$/;

/**
 * The network a command that opted into network gets (a setup phase installing dependencies, an
 * agent with --agent-network): a bridge, never the host's network, whose loopback (a database, the
 * harness's own services) a command must not reach. The engine's default `bridge` when it has one,
 * else redgreen's own bridge, created on first use. An engine started with `--iptables=false` gives
 * bridges no NAT: they still isolate, but reach nothing outside the host (a setup's download fails).
 */
export async function resolveSetupNetwork(docker: Docker, preferred?: string): Promise<string> {
  const engine = profileOf(docker).backend;
  if (preferred && SHARED.test(preferred))
    throw new RedgreenError(
      'USAGE',
      `${engine}: the setup network "${preferred}" would share another network namespace, the host's loopback included`,
      'name a bridge network, or leave it unset for the default bridge',
    );
  if (preferred) return preferred;
  let nets: Docker.NetworkInspectInfo[];
  try {
    nets = await docker.listNetworks();
  } catch (e) {
    throw engineFailure('list networks', e, docker);
  }
  if (nets.some((n) => n.Name === 'bridge')) return 'bridge';
  const own = nets.find((n) => n.Name === SETUP_NETWORK);
  if (own && own.Driver !== 'bridge')
    throw new RedgreenError(
      'SANDBOX_FAILED',
      `${engine}: the network "${SETUP_NETWORK}" has driver ${own.Driver}, not bridge: commands with network cannot use it`,
      `remove it (${engine} network rm ${SETUP_NETWORK}); redgreen creates the bridge again`,
    );
  if (own) return SETUP_NETWORK;
  try {
    await docker.createNetwork({ Name: SETUP_NETWORK, Driver: 'bridge', CheckDuplicate: true, Labels: { ...SETUP_NETWORK_LABEL } });
  } catch (e) {
    // Another run created it meanwhile: that is the network wanted.
    if (statusOf(e) === 409) return SETUP_NETWORK;
    throw new RedgreenError(
      'SANDBOX_FAILED',
      `${engine}: commands with network need a bridge network; the engine has no default bridge and creating "${SETUP_NETWORK}" failed: ${describeError(e)}`,
      `start the engine with a bridge (dockerd without --bridge=none), or create one: ${engine} network create ${SETUP_NETWORK}`,
      { cause: e },
    );
  }
  return SETUP_NETWORK;
}

/**
 * The network of `image build`'s install step: the default bridge, else the host's network. Unlike
 * setup, it runs no fixture code, only apt from the chosen mirror, and on an engine without NAT
 * (`--iptables=false`) only the host's network reaches a mirror.
 */
export async function resolveBuildNetwork(docker: Docker, preferred?: string): Promise<string> {
  if (preferred) return preferred;
  try {
    const nets = await docker.listNetworks();
    return nets.some((n) => n.Name === 'bridge') ? 'bridge' : 'host';
  } catch (e) {
    throw engineFailure('list networks', e, docker);
  }
}

export interface NetworkRunRequest extends CommandRequest {
  /** The user and capabilities are the sandbox user's and none, unless the plan says otherwise (the layer copy: layers.ts). */
  plan: Omit<ContainerPlan, 'cmd' | 'env' | 'workingDir' | 'user' | 'stdin' | 'capAdd'> & Partial<Pick<ContainerPlan, 'user' | 'capAdd'>>;
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
        user: req.plan.user ?? SANDBOX_USER,
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
