import { z } from 'zod';
import { AuditFindingSchema } from './audit.js';

/** What happened to a patch, as a report records it. */
export const PatchSummarySchema = z.object({
  source: z.string(),
  sha256: z.string().nullable(),
  status: z.enum(['applied', 'already_applied', 'failed', 'not_a_diff', 'empty', 'unsafe', 'missing', 'none']),
  reason: z.string().optional(),
  files: z.array(z.string()).default([]),
  /** Protected paths the patch changed; kept as the fixture had them. */
  tampered: z.array(z.string()).default([]),
  /** Applied only by the fuzzy fallback (reduced context, whitespace ignored). */
  fuzzy: z.boolean().default(false),
  /** Added lines that reach into test-framework internals (harness/patch/audit.ts): a pass it gets is suspicious (absent: none). */
  audit: z.array(AuditFindingSchema).optional(),
});
export type PatchSummary = z.infer<typeof PatchSummarySchema>;
