/**
 * TEST DOUBLE of E2B (see README.md): the sandboxes it holds. A sandbox is a folder with its users'
 * homes, a set of processes and open streams, and an expiry timer like E2B's `timeout`.
 */
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { killSandboxProcesses, TEMPLATE_PATH, type DoubleProcess } from './processes.js';

export interface DoubleSandbox {
  id: string;
  templateID: string;
  metadata: Record<string, string>;
  envVars: Record<string, string>;
  startedAt: Date;
  endAt: Date;
  dir: string;
  accessToken: string;
  envdVersion: string;
  /** user name → home folder (a host path inside `dir`). */
  homes: Map<string, string>;
  alive: boolean;
  expiry?: NodeJS.Timeout;
  processes: Map<number, DoubleProcess>;
  /** Open envd streams and sockets, reset when the sandbox dies. */
  connections: Set<{ cut(): void }>;
}

export interface RegistryOptions {
  /** Where sandbox folders are made (one temp folder each, removed when the sandbox dies). */
  baseDir: string;
  envdVersion: string;
  users: readonly string[];
}

export class Registry {
  private readonly sandboxes = new Map<string, DoubleSandbox>();
  /** Every sandbox ever created, for tests that count creations and kills. */
  readonly history: { id: string; metadata: Record<string, string>; killedBy: string | null }[] = [];
  /** 'start' (sandboxId, command text) when a process starts: lets a test act at that moment. */
  readonly events = new EventEmitter();
  /** Requests by route: control plane (`POST /v2/sandboxes`) and envd (`envd /process.Process/Start`, `envd POST /files`). */
  readonly requests: Record<string, number> = {};

  count(route: string): void {
    this.requests[route] = (this.requests[route] ?? 0) + 1;
  }

  constructor(private readonly o: RegistryOptions) {}

  get(id: string): DoubleSandbox | undefined {
    const sb = this.sandboxes.get(id);
    return sb?.alive ? sb : undefined;
  }

  alive(): DoubleSandbox[] {
    return [...this.sandboxes.values()].filter((s) => s.alive);
  }

  /** `homesIn`: the folder of the users' homes inside the sandbox's (default: none, as `/root` and `/home/<user>` in a VM). */
  async create(
    body: {
      templateID: string;
      metadata?: Record<string, string>;
      envVars?: Record<string, string>;
      timeout?: number;
    },
    homesIn = '',
  ): Promise<DoubleSandbox> {
    const id = `i${randomBytes(10).toString('hex')}`;
    // Named by the id alone, so paths inside differ from another sandbox's by the id only (a VM's are the same).
    const dir = path.join(this.o.baseDir, `rg-e2b-sandbox-${id}`);
    await mkdir(dir);
    const homes = new Map(this.o.users.map((u) => [u, path.join(dir, homesIn, u === 'root' ? 'root' : path.join('home', u))]));
    // A real sandbox is a VM with a /tmp of its own: each double has one too (TMPDIR, see processes.ts).
    await mkdir(path.join(dir, 'tmp'));
    for (const home of homes.values()) {
      await mkdir(home, { recursive: true });
      // A template's login profile: `bash -l` resets PATH from /etc/profile, the template puts its tools back.
      await writeFile(path.join(home, '.bash_profile'), `export PATH=${JSON.stringify(TEMPLATE_PATH)}\n`);
    }
    const now = new Date();
    const sb: DoubleSandbox = {
      id,
      templateID: body.templateID,
      metadata: { ...(body.metadata ?? {}) },
      envVars: { ...(body.envVars ?? {}) },
      startedAt: now,
      endAt: now,
      dir,
      accessToken: randomBytes(16).toString('hex'),
      envdVersion: this.o.envdVersion,
      homes,
      alive: true,
      processes: new Map(),
      connections: new Set(),
    };
    this.sandboxes.set(id, sb);
    this.history.push({ id, metadata: sb.metadata, killedBy: null });
    this.setTimeout(sb, body.timeout ?? 300);
    return sb;
  }

  /** E2B semantics: the sandbox is killed when its timeout elapses, counted from now. */
  setTimeout(sb: DoubleSandbox, seconds: number): void {
    clearTimeout(sb.expiry);
    sb.endAt = new Date(Date.now() + seconds * 1000);
    sb.expiry = setTimeout(() => void this.kill(sb.id, 'timeout'), seconds * 1000);
    sb.expiry.unref();
  }

  /** Kills every process, resets every connection, removes the folder. False when unknown or dead. */
  async kill(id: string, by: string): Promise<boolean> {
    const sb = this.sandboxes.get(id);
    if (!sb?.alive) return false;
    sb.alive = false;
    clearTimeout(sb.expiry);
    const h = this.history.find((x) => x.id === id);
    if (h) h.killedBy = by;
    for (const c of sb.connections) c.cut();
    sb.connections.clear();
    await killSandboxProcesses(sb);
    await rm(sb.dir, { recursive: true, force: true, maxRetries: 3 });
    this.sandboxes.delete(id);
    return true;
  }

  async killAll(by: string): Promise<void> {
    await Promise.all([...this.sandboxes.keys()].map((id) => this.kill(id, by)));
  }
}
