import { existsSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { gcHost } from '../host/descriptor.js';
import { defineBackend, probeBy } from '../registry.js';

const INSTALL = 'install bubblewrap (apt-get install -y bubblewrap) on a kernel that allows user namespaces';

export const bwrapBackend = defineBackend({
  name: 'bwrap',
  summary:
    'bubblewrap namespaces per command: no network (a command that opts in: slirp4netns, never the host loopback), a read-only minimal host, cgroup limits',
  isolating: true,
  remote: false,
  autoRank: 1,
  options: z.object({}),
  flags: [],
  async create(_options, ctx) {
    const { BwrapBackend } = await import('./backend.js');
    const backend = new BwrapBackend({ passEnv: ctx.passEnv, cacheDir: ctx.cacheDir });
    await backend.probe();
    return backend;
  },
  async probe(_options, ctx) {
    const { BwrapBackend } = await import('./backend.js');
    const probe = await probeBy(() => new BwrapBackend({ passEnv: ctx.passEnv, cacheDir: ctx.cacheDir }).probe(), INSTALL);
    if (!probe.ok) return probe;
    // Usable without them, so still ok (auto may pick it); doctor shows what is missing.
    const notes = [
      // The sandbox size limit is a tmpfs mount (host/disk-limit.ts): say what a user without root gets.
      process.getuid?.() !== 0 ? 'no workspace size limit without root (a single file is still capped by RLIMIT_FSIZE)' : '',
      onPath('slirp4netns') ? '' : 'no slirp4netns: setup with network (and --agent-network) will fail; apt-get install -y slirp4netns',
    ].filter(Boolean);
    return notes.length ? { ok: true, detail: notes.join('; ') } : probe;
  },
  gc: (request) => gcHost(request, 'bwrap'),
});

const onPath = (tool: string) => (process.env.PATH ?? '').split(path.delimiter).some((d) => d && existsSync(path.join(d, tool)));
