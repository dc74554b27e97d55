/**
 * TEST DOUBLE of E2B (see README.md): the faults a test can inject. Each is plain data the double
 * reads on every request, so a test sets `double.faults` before the step it wants to break.
 */
export interface Faults {
  /** Creation requests answered with an error status (429 rate limit, 503 busy, 500) — `times` of them, or all. */
  refuseCreate?: { status: 429 | 500 | 503; times?: number };
  /** The sandbox dies (every process killed, connections reset) once a command whose text contains `match` has started and `afterMs` passed. */
  dieOn?: { match: string; afterMs?: number };
  /** The Start stream of a command containing `match` is cut after its first output (the process keeps running). */
  cutStreamOn?: { match: string };
  /** Starting a command containing `match` fails (envd unavailable), e.g. to make a kill unconfirmable. */
  refuseStartOn?: { match: string };
  /** Sandboxes created while set have their users' homes elsewhere: a template rebuilt with another home during a run. */
  movedHomes?: boolean;
  /** A slow service: control-plane (`api`), creation (`create`, on top of `api`) and envd requests wait this long. */
  latencyMs?: { api?: number; create?: number; envd?: number };
}

/** Takes one use of a counted fault; true when the fault applies to this request. */
export function consumeRefusal(faults: Faults): Faults['refuseCreate'] | undefined {
  const r = faults.refuseCreate;
  if (!r) return undefined;
  if (r.times !== undefined) {
    if (r.times <= 0) return undefined;
    r.times -= 1;
  }
  return r;
}

export function delay(ms: number | undefined): Promise<void> | undefined {
  return ms ? new Promise((resolve) => setTimeout(resolve, ms)) : undefined;
}
