import type { Fixture } from '../fixtures/load.js';
import type { ReadTree } from '../sandbox/core/tree.js';
import type { SandboxBackend } from '../sandbox/core/types.js';
import type { FixtureEvent } from './events.js';
import type { PatchInput } from './patch-phase.js';
import type { SetupCache } from './setup-cache.js';

export interface ProviderContext {
  backend: SandboxBackend;
  runId: string;
  signal: AbortSignal;
  emit: (event: FixtureEvent) => void;
  setupCache: SetupCache | null;
  /** The fixture's oracle as its fingerprint read it (null: there is none; absent: not read). */
  oracle?: Buffer | null;
  /** The fixture's tree as its fingerprint read it, for an agent's upload (absent or null: walked again). */
  tree?: ReadTree | null;
}

/**
 * Where a fixture's patch comes from (harness/agents/ implements these). An `agent` provider does
 * real work in a sandbox of its own, timed as the fixture's agent phase; a `static` one only reads.
 */
export interface PatchProvider {
  readonly kind: 'static' | 'agent';
  /** Names what is graded: "oracle", "nop", a model name, an agent command. */
  readonly subject: string;
  /** An empty patch is run anyway: it is what is measured (`nop`: the fixtures stay RED). */
  readonly gradesEmpty?: boolean;
  /** Patch sources: the fixtures it has a patch for; the others are not submitted and not run. */
  readonly covers?: ReadonlySet<string>;
  patchFor(fixture: Fixture, ctx: ProviderContext): Promise<PatchInput>;
}
