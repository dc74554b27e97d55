import { isBuiltinRunner, type Runner, type RunnerId } from '../fixtures/manifest.js';

/**
 * The programs and modules each runner needs from the machine. When one of them is missing, the
 * machine (or the image) lacks it: an infrastructure problem, never the fixture's or the patch's.
 * Any other missing command is the fixture's own (a typo in test.command, say).
 */
const RUNNER_TOOLS: Record<Runner, readonly string[]> = {
  pytest: ['python3', 'python', 'pytest'],
  unittest: ['python3', 'python'],
  'node-test': ['node'],
  vitest: ['node', 'npx', 'vitest'],
  jest: ['node', 'npx', 'jest'],
  mocha: ['node', 'npx', 'mocha'],
  ava: ['node', 'npx', 'ava'],
  tap: ['node', 'npx'],
  uvu: ['node', 'npx', 'uvu'],
  go: ['go'],
  cargo: ['cargo'],
  junit: [],
  'exit-code': ['sh'],
};

/** What the shell or an interpreter said is missing: a command (exit 127) or a Python module. */
export function missingCommand(stderr: string, exitCode: number): { name: string; module: boolean } | null {
  const mod = /No module named '?([\w.]+)'?/.exec(stderr);
  if (mod) return { name: mod[1]!.split('.')[0]!, module: true };
  if (exitCode !== 127) return null;
  const cmd = /(?:^|\n)(?:[^\n:]+: )*(?:line \d+: )?([\w.+-]+): (?:command )?not found/.exec(stderr);
  return cmd ? { name: cmd[1]!, module: false } : null;
}

/** The runner tool this failed run lacked, or null when what is missing is not the runner's. */
export function missingRunnerTool(runner: RunnerId, stderr: string, exitCode: number, tools: readonly string[] = []): string | null {
  const missing = missingCommand(stderr, exitCode);
  const needed = isBuiltinRunner(runner) ? RUNNER_TOOLS[runner] : tools;
  return missing && needed.includes(missing.name) ? missing.name : null;
}
