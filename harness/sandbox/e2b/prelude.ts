import { RedgreenError } from '../../errors.js';
import { helperScript, HELPER_UNSAFE_PATH, q, ROOT_IN_HOME } from './script.js';

/**
 * Steps that ride in front of a helper call, in the same request: the helper's installation in a
 * sandbox created without it (after checking that its home is the one the harness assumed), steps
 * deferred while the sandbox was fresh (uploads, removals), a working-directory check. Each request
 * saved is one less round trip and about 2.5 ms less harness CPU (the SDK's own cost per request).
 *
 * The steps run in the shell envd starts, each in its own helper process with its output captured;
 * then that shell execs into the call itself. Their outcome is the first line of stdout, keyed by a
 * nonce made for this call: `<nonce> ok`, or `<nonce> fail <step> <code>` and the failed step's
 * output. The call's own process starts only after that line is written, and its command line no
 * longer holds the nonce, so nothing a fixture or a patch runs can forge either line.
 */
export interface Step {
  /** Helper arguments, e.g. `['put64', <base64 archive>]`. */
  args: readonly string[];
  /** What the step does, for its error message: "unpacking an upload". */
  what: string;
}

export interface Prelude {
  /** Install the helper, once `$HOME/redgreen` is checked to be the root the sandbox was made with. */
  install: boolean;
  steps: readonly Step[];
}

export type PreludeFailure = { step: 'home' | 'install' | number; code: number; output: string };
export type PreludeOutcome = { ok: true } | ({ ok: false } & PreludeFailure);

/** The exit code of a shell whose prelude failed; the marker line, not this code, is what counts. */
const PRELUDE_FAILED = 86;
const QUOTED_HELPER = q(helperScript());

/** What arguments add to a command line, quoted and spaced. */
export const argBytes = (args: readonly string[]): number => args.reduce((n, a) => n + Buffer.byteLength(a) + 3, 0);

/** The command line of a helper call with its prelude: one argument of `bash -l -c`, so under Linux's 128 KiB. */
export function preludeCommand(root: string, p: Prelude, args: readonly string[], nonce: string): string {
  const lines = [`N=${nonce} R=${q(root)}`, `rg_fail() { printf '%s fail %s %s\\n%s\\n' "$N" "$1" "$2" "$3"; exit ${PRELUDE_FAILED}; }`];
  if (p.install) {
    lines.push(
      `[ "$HOME/${ROOT_IN_HOME}" = "$R" ] || rg_fail home 1 "$HOME"`,
      // Written whole, then renamed: a concurrent call (a kill) installing it too never reads half a helper.
      `o=$({ mkdir -p "$R/bin" && printf %s ${QUOTED_HELPER} >"$R/bin/rg.$$" && mv -f "$R/bin/rg.$$" "$R/bin/rg"; } 2>&1) || rg_fail install $? "$o"`,
    );
  }
  p.steps.forEach((s, i) => lines.push(`o=$(/bin/sh "$R/bin/rg" ${s.args.map(q).join(' ')} 2>&1) || rg_fail ${i} $? "$o"`));
  lines.push(`echo "$N ok"`, `exec /bin/sh "$R/bin/rg" ${args.map(q).join(' ')}`);
  return lines.join('\n');
}

/**
 * Reads a prelude's outcome off the start of the call's stdout, as it streams, and hands on the
 * rest. Lines before the outcome (a login profile that prints) belong to the call, as they would
 * without a prelude; after a failure, everything is the failed step's output.
 */
export class PreludeReader {
  outcome: PreludeOutcome | null = null;
  private held = '';

  constructor(
    private readonly nonce: string,
    private readonly onOutcome: () => void,
  ) {}

  /** A chunk of stdout; returns the part that is the call's own output. */
  feed(text: string): string {
    if (this.outcome?.ok) return text;
    if (this.outcome) {
      this.outcome.output += text;
      return '';
    }
    this.held += text;
    let out = '';
    let nl: number;
    while (!this.outcome && (nl = this.held.indexOf('\n')) >= 0) {
      const line = this.held.slice(0, nl);
      this.held = this.held.slice(nl + 1);
      if (line === `${this.nonce} ok`) this.outcome = { ok: true };
      else if (line.startsWith(`${this.nonce} fail `)) {
        const [step = '', code = ''] = line.slice(this.nonce.length + 6).split(' ');
        this.outcome = {
          ok: false,
          step: /^\d+$/.test(step) ? Number(step) : (step as 'home' | 'install'),
          code: Number(code),
          output: '',
        };
      } else out += `${line}\n`;
    }
    if (!this.outcome) return out;
    this.onOutcome();
    const rest = this.held;
    this.held = '';
    if (this.outcome.ok) return out + rest;
    this.outcome.output += rest;
    return out;
  }

  /** The stream ended: whatever was held back waiting for a newline. */
  end(): string {
    const rest = this.outcome ? '' : this.held;
    this.held = '';
    return rest;
  }
}

/** The error a failed step stands for: the one the same step run on its own would have thrown. */
export function preludeError(f: PreludeFailure, steps: readonly Step[], sandboxId: string): RedgreenError {
  const why = f.output.trim().split('\n').pop() ?? '';
  if (f.step === 'install')
    return new RedgreenError(
      'SANDBOX_FAILED',
      `e2b: installing the helper in sandbox ${sandboxId} failed (exit ${f.code}): ${why}`,
      'the template needs a POSIX shell, tar, base64 and a writable $HOME',
    );
  if (f.step === 'home')
    return new RedgreenError(
      'SANDBOX_FAILED',
      `e2b: sandbox ${sandboxId} has its home at ${why}, not where the template's earlier sandboxes had it (the template changed during the run?)`,
      'sandboxes created from now on learn the new place; a fixture that got this one is retried',
    );
  if (f.code === HELPER_UNSAFE_PATH) return new RedgreenError('SANDBOX_PATH_UNSAFE', why);
  return new RedgreenError(
    'SANDBOX_FAILED',
    `e2b: ${steps[f.step]?.what ?? 'a step'} failed in sandbox ${sandboxId} (exit ${f.code}): ${why}`,
  );
}
