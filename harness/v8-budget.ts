import { setFlagsFromString } from 'node:v8';

/**
 * V8 optimises a function once it has run some bytecode (66 KB in Node 20's V8). The harness runs
 * thousands of small functions a few times per fixture, so it kept optimising all run long: over
 * 1,000 trivial fixtures about 1.5 ms of CPU per fixture went to the optimising compiler, more
 * than it saved. A budget of 1 MB still optimises what runs hot (a parser's loop over a big
 * report: a 20,000-test JUnit file parses as fast), and little else (npm run bench: harness CPU
 * per fixture). Node keeps V8's flags settable after start; V8 has had this one for a decade.
 * The CLI sets it before its bundle compiles: V8's cached code holds only under the flags it was made with.
 */
export function setInterruptBudget(): void {
  setFlagsFromString('--interrupt-budget=1081344');
}
