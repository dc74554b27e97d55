/**
 * Appends the harness's options to a test command whose last program is the runner (`npx jest`,
 * `npm test`). npm reads options after a script name as its own (`npm test --json` sets npm's
 * `json` config), so they go after `--` there; yarn and pnpm pass them through as they are.
 */
export function appendArgs(command: string, args: string): string {
  const trimmed = command.trimEnd();
  const npmScript = /(^|[;&|]\s*|\s)npm\s+(test|t|tst|(run|run-script)\s+[\w:.-]+)\s*$/.test(trimmed);
  return `${trimmed}${npmScript ? ' --' : ''} ${args}`;
}

/** The same, with each value quoted for sh when it needs it. */
export function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
