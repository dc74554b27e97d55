import type { RunOptions } from '../config/options.js';
import type { ProjectPaths } from '../config/paths.js';
import { BwrapBackend } from '../sandbox/bwrap/backend.js';
import { DockerBackend } from '../sandbox/docker/backend.js';
import { E2BBackend } from '../sandbox/e2b/backend.js';
import { LocalBackend } from '../sandbox/host/local.js';
import type { SandboxBackend } from '../sandbox/core/types.js';

/** The backend a run asked for; `auto` picks the strongest one that works on this machine. */
export async function createBackend(options: RunOptions, paths: ProjectPaths): Promise<SandboxBackend> {
  const local = () => new LocalBackend({ passEnv: options.passEnv, cacheDir: paths.cacheDir });
  const bwrap = () => new BwrapBackend({ passEnv: options.passEnv, cacheDir: paths.cacheDir });
  switch (options.backend) {
    case 'local':
      return local();
    case 'bwrap': {
      const b = bwrap();
      await b.probe();
      return b;
    }
    case 'docker':
      return new DockerBackend({ passEnv: options.passEnv, pool: options.pool });
    case 'e2b':
      return new E2BBackend({
        template: options.template ?? process.env.E2B_TEMPLATE,
        user: options.e2bUser ?? process.env.E2B_USER,
        passEnv: options.passEnv,
        warm: options.warm,
        limits: { ratePerSec: options.createRate, burst: options.createRate },
      });
    // auto never picks a remote service: that costs money and needs credentials.
    case 'auto': {
      const docker = new DockerBackend({ passEnv: options.passEnv, pool: options.pool });
      if (await docker.probe().then(() => true, () => false)) return docker;
      const b = bwrap();
      return b.probe().then(
        () => b,
        () => local(),
      );
    }
  }
}
