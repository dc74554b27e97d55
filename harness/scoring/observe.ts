import type { TestPhase } from '../results/phase.js';

const failing = (s: string) => s === 'failed' || s === 'error';

/** failToPass / passToPass as one RED and one GREEN run show them. */
export function observeTransitions(red: TestPhase, green: TestPhase): { failToPass: string[]; passToPass: string[] } {
  const before = new Map(red.tests.map((t) => [t.id, t.status]));
  const failToPass: string[] = [];
  const passToPass: string[] = [];
  for (const t of green.tests) {
    if (t.status !== 'passed') continue;
    const was = before.get(t.id);
    if (was === 'passed') passToPass.push(t.id);
    else if (was === undefined || failing(was)) failToPass.push(t.id);
  }
  return { failToPass, passToPass };
}

/** The status of `id` in a phase; a test missing from the report counts as failed. */
export function statusIn(phase: TestPhase, id: string): string {
  return phase.tests.find((t) => t.id === id)?.status ?? 'missing';
}
