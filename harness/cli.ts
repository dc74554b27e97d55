#!/usr/bin/env node
// The entry point. `--version` answers before anything else loads (no commander, no zod); every
// other command goes through the program in cli-program.ts, which loads each command's own
// modules only when it runs.
import { harnessVersion } from './config/paths.js';

// A reader that stops early (`redgreen list | head`) closes the pipe: what is left to print goes
// nowhere, and the command ends as it would have (a run still cleans up and writes its report).
for (const out of [process.stdout, process.stderr]) {
  out.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE') throw e;
  });
}
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) process.stdout.write(`${harnessVersion()}\n`);
else await (await import('./cli-program.js')).main(process.argv);
