// The CLI, run by the bench, that leaves its own resource use in a file when it exits: the
// harness's CPU apart from the commands it runs (those are its children, not counted here).
import { fileURLToPath } from 'node:url';
import { writeOwnUsage } from './own-usage.js';

const [usageFile, ...args] = process.argv.slice(2);
if (!usageFile) throw new Error('usage: measured-cli.js <usage-file> <redgreen args…>');
process.argv = [process.argv[0]!, fileURLToPath(new URL('../cli.js', import.meta.url)), ...args];
process.on('exit', () => writeOwnUsage(usageFile));
// Another build's program may be measured the same way (an A/B comparison of two checkouts);
// older builds ran their program when it was imported.
const cli = (await import(process.env.REDGREEN_BENCH_PROGRAM ?? '../cli-program.js')) as { main?: (argv: string[]) => Promise<void> };
await cli.main?.(process.argv);
