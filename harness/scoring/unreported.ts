import type { TestPhase } from '../results/phase.js';

/** Edit distance between two ids (two rows of the table at a time). */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length]!;
}

/** The reported ids nearest to `id`, nearest first. */
export function closestIds(id: string, reported: readonly string[], n = 3): string[] {
  return [...new Set(reported)]
    .map((r) => ({ r, d: distance(id, r) }))
    .sort((x, y) => x.d - y.d || x.r.localeCompare(y.r))
    .slice(0, n)
    .map((x) => x.r);
}

/**
 * Declared test ids the runner never reported in any of these phases: a stale or mistyped list,
 * not a failing test. Says which, what the runner reported that comes closest, and what to run.
 */
export function neverReported(declared: readonly string[], ...phases: readonly (TestPhase | null)[]): string | null {
  const reported = phases.flatMap((p) => p?.tests.map((t) => t.id) ?? []);
  if (!reported.length) return null; // nothing ran: the phase itself is the problem
  const seen = new Set(reported);
  const missing = [...new Set(declared)].filter((id) => !seen.has(id));
  if (!missing.length) return null;
  const first = missing[0]!;
  return (
    `declared tests never reported by the runner: ${missing.slice(0, 4).join(', ')}${missing.length > 4 ? ` and ${missing.length - 4} more` : ''}` +
    ` (closest reported to ${first}: ${closestIds(first, reported).join(', ')}); run \`redgreen selfcheck <id> --write\` to record the ids the runner reports`
  );
}
