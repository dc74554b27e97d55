import type { Discovery } from '../fixtures/load.js';
import { fingerprintFixture } from '../fixtures/fingerprint.js';
import { RedgreenError } from '../errors.js';
import type { Selection } from '../fixtures/select.js';
import { ReportSchema } from '../reporters/report.js';
import { setAsideAttempt, type ResumePoint } from '../transcripts/resume.js';
import type { ExecuteInput } from './execute.js';

const ReportShardSchema = ReportSchema.shape.shard.unwrap();

/** The shard a resumed run recorded (older runs recorded none). */
export function recordedShard(value: unknown): Selection['shard'] {
  const r = ReportShardSchema.safeParse(value);
  return r.success ? r.data : undefined;
}

/**
 * Checks that a run can be resumed with what is on disk now: same mode and patch source, and
 * (unless forced) fixtures whose content is what the transcript recorded.
 */
export async function prepareResume(point: ResumePoint, input: ExecuteInput, discovery: Discovery): Promise<ResumePoint> {
  const { state } = point;
  if (state.mode !== input.mode)
    throw new RedgreenError(
      'USAGE',
      `run ${state.runId} is a ${state.mode} run; resume it with \`redgreen ${state.mode} --resume ${state.runId}\``,
    );
  const subject = state.options.subject;
  if (subject !== undefined && subject !== input.provider.subject) {
    throw new RedgreenError(
      'USAGE',
      `run ${state.runId} graded "${String(subject)}", not "${input.provider.subject}"`,
      'resume with the same --patches/--agent as the interrupted run',
    );
  }
  const changed: string[] = [];
  for (const f of discovery.fixtures) {
    const recorded = point.recordedHashes.get(f.id);
    if (recorded && recorded !== (await fingerprintFixture(f))) changed.push(f.id);
  }
  if (changed.length && !input.resume!.force) {
    throw new RedgreenError(
      'USAGE',
      `fixtures or oracles changed since run ${state.runId} was recorded: ${changed.join(', ')}`,
      'resume with --force to keep the old results anyway, or start a new run',
    );
  }
  for (const id of changed) point.kept.delete(id);
  const stamp = Date.now();
  for (const id of Object.keys(state.fixtures)) if (!point.kept.has(id)) await setAsideAttempt(point.dir, id, stamp);
  return point;
}
