import { LocalBackend } from '../sandbox/local.js';
import type { SandboxBackend } from '../sandbox/types.js';
import type { ProjectPaths } from '../config/paths.js';
import type { RunOptions } from '../config/options.js';

export function createBackend(options: RunOptions, paths: ProjectPaths): SandboxBackend {
  switch (options.backend) {
    case 'local':
      return new LocalBackend({ passEnv: options.passEnv, cacheDir: paths.cacheDir });
  }
}
