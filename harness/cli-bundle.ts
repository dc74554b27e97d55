// What dist/cli.js runs in place of cli-program.js (scripts/bundle.mjs puts it there): the same
// program, from the CommonJS bundle beside it, compiled by V8 once and then read from its code cache.
import { fileURLToPath } from 'node:url';
import { requireWithCodeCache } from './code-cache.js';
import { setInterruptBudget } from './v8-budget.js';

setInterruptBudget();
export const { main } = requireWithCodeCache(
  fileURLToPath(new URL('./redgreen.cjs', import.meta.url)),
  (specifier) => import(specifier),
) as typeof import('./cli-program.js');
