import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { RedgreenError } from '../errors.js';

const LAST = /^last(?:~(\d+))?$/;

/**
 * `last` is the newest run in a folder of runs, `last~1` the one before it, and so on (run ids
 * begin with their start time, so their order is the runs' order). Anything else, and a folder
 * really named `last`, is returned as it is.
 */
export async function resolveRunRef(ref: string, dir: string): Promise<string> {
  const m = LAST.exec(ref);
  if (!m || existsSync(ref) || existsSync(path.join(dir, ref))) return ref;
  const runs = (await readdir(dir).catch(() => [] as string[])).filter((n) => /^\d{8}-\d{6}-/.test(n)).sort();
  const back = Number(m[1] ?? 0);
  const id = runs[runs.length - 1 - back];
  if (!id)
    throw new RedgreenError(
      'USAGE',
      `there is no run ${ref}: ${dir} holds ${runs.length} run(s)`,
      'run selfcheck or run first, or name a run id',
    );
  return id;
}
