import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { jsonProblem, RedgreenError } from '../errors.js';
import type { PatchProvider } from '../pipeline/provider.js';
import { mapProvider } from './static.js';

/** A problem with one entry of a patch source; the rest of the run goes on. */
export interface SourceProblem {
  where: string;
  message: string;
}

export interface LoadedSources {
  providers: PatchProvider[];
  problems: SourceProblem[];
}

const PredictionSchema = z.object({
  instance_id: z.string().min(1),
  model_name_or_path: z.string().min(1).default('model'),
  // Required: a line without it is a broken prediction, not an empty patch (null is SWE-bench's empty one).
  model_patch: z.string({ error: 'no model_patch: give the patch, or "" for an empty one' }).nullable(),
});

/**
 * SWE-bench predictions, one JSON object per line. Several models in one file become separate
 * runs; a bad line or an unknown fixture is reported with its line number and skipped.
 */
export async function loadPredictions(file: string, knownIds: ReadonlySet<string>): Promise<LoadedSources> {
  const text = await readFile(file, 'utf8').catch(() => {
    throw new RedgreenError('USAGE', `cannot read predictions file ${file}`);
  });
  const byModel = new Map<string, Map<string, { source: string; text: string }>>();
  const problems: SourceProblem[] = [];
  const name = path.basename(file);
  const lines = text.split('\n');
  // A JSON array (SWE-bench also accepts that) is read as a whole.
  const entries: { line: number; value: unknown }[] = [];
  if (text.trimStart().startsWith('[')) {
    try {
      (JSON.parse(text) as unknown[]).forEach((value, i) => entries.push({ line: i + 1, value }));
    } catch (e) {
      throw new RedgreenError('USAGE', `${name}: not valid JSON (${jsonProblem(text, e)})`);
    }
  } else {
    lines.forEach((raw, i) => {
      if (!raw.trim()) return;
      try {
        entries.push({ line: i + 1, value: JSON.parse(raw) });
      } catch (e) {
        problems.push({
          where: `${name}:${i + 1}`,
          message: `not valid JSON (${jsonProblem(raw, e).replace(/ at line 1, column/, ' at column')})`,
        });
      }
    });
  }
  for (const { line, value } of entries) {
    const where = `${name}:${line}`;
    const p = PredictionSchema.safeParse(value);
    if (!p.success) {
      problems.push({ where, message: p.error.issues.map((i) => `${i.path.join('.') || '(line)'}: ${i.message}`).join('; ') });
      continue;
    }
    const { instance_id: id, model_name_or_path: model, model_patch: patch } = p.data;
    if (!knownIds.has(id)) {
      problems.push({ where, message: `unknown fixture "${id}"` });
      continue;
    }
    const patches = byModel.get(model) ?? byModel.set(model, new Map()).get(model)!;
    if (patches.has(id)) problems.push({ where, message: `a second prediction for ${id} by ${model}: the later one is used` });
    patches.set(id, { source: `${where} (${model})`, text: patch ?? '' });
  }
  if (!byModel.size && !problems.length) throw new RedgreenError('USAGE', `${name} has no predictions`);
  return { providers: [...byModel].map(([model, patches]) => mapProvider(model, patches)), problems };
}

/** A folder of `<fixture-id>.patch` (or `.diff`) files. */
export async function loadPatchDir(dir: string, knownIds: ReadonlySet<string>): Promise<LoadedSources> {
  const names = await readdir(dir).catch(() => {
    throw new RedgreenError('USAGE', `cannot read patch folder ${dir}`);
  });
  const patches = new Map<string, { source: string; text: string }>();
  const problems: SourceProblem[] = [];
  for (const n of names.sort()) {
    const m = /^(.+)\.(patch|diff)$/.exec(n);
    if (!m) continue;
    const id = m[1]!;
    if (!knownIds.has(id)) {
      problems.push({ where: n, message: `unknown fixture "${id}"` });
      continue;
    }
    if (patches.has(id)) problems.push({ where: n, message: `${id} has both a .patch and a .diff: ${n} is used` });
    patches.set(id, { source: path.join(dir, n), text: await readFile(path.join(dir, n), 'utf8') });
  }
  return { providers: [mapProvider(path.basename(path.resolve(dir)), patches)], problems };
}

/** `--patches` takes a JSONL/JSON predictions file or a folder of patches. */
export async function loadPatches(p: string, knownIds: ReadonlySet<string>): Promise<LoadedSources> {
  const st = await stat(p).catch(() => null);
  if (!st) throw new RedgreenError('USAGE', `--patches: ${p} does not exist`);
  return st.isDirectory() ? loadPatchDir(p, knownIds) : loadPredictions(p, knownIds);
}
