import { z } from 'zod';
import { rulesBrokenBy } from './audit-rules.js';
import { unquotePath, type ParsedPatch } from './parse.js';

/** One added line that reaches into test-framework internals, as reports show it. */
export const AuditFindingSchema = z.object({
  file: z.string(),
  /** Line number in the patched file. */
  line: z.number(),
  /** The rules it breaks (ids of harness/patch/audit-rules.ts), comma-separated. */
  rule: z.string(),
  text: z.string(),
});
export type AuditFinding = z.infer<typeof AuditFindingSchema>;

export interface AddedLine {
  file: string;
  line: number;
  text: string;
}

/** Files that look like tests by name, for fixtures whose protected globs do not cover them. */
const TEST_FILE = /(^|\/)(tests?|__tests__|spec)\/|(^|\/)(test_[^/]*|[^/]*_test)\.py$|\.(test|spec)\.[cm]?[jt]sx?$/;

export function looksLikeTest(file: string): boolean {
  return TEST_FILE.test(file);
}

/** Lines each file section adds, with their line numbers in the new file (hunk counts are followed exactly). */
export function addedLines(text: string, strip: number): AddedLine[] {
  const out: AddedLine[] = [];
  let file: string | null = null;
  let oldLeft = 0;
  let newLeft = 0;
  let lineNo = 0;
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\r$/, '');
    if (oldLeft > 0 || newLeft > 0) {
      const c = line[0];
      if (c === '\\') continue; // "\ No newline at end of file"
      if (c === '+') {
        if (file !== null) out.push({ file, line: lineNo, text: line.slice(1) });
        newLeft--;
        lineNo++;
      } else if (c === '-') oldLeft--;
      else {
        oldLeft--;
        newLeft--;
        lineNo++;
      }
      continue;
    }
    if (line.startsWith('+++ ')) {
      const p = unquotePath(line.slice(4).replace(/\t.*$/, '').trimEnd());
      file = p === '/dev/null' ? null : p.startsWith('/') ? p : p.split('/').slice(strip).join('/');
      continue;
    }
    const hunk = /^@@ -\d+(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/.exec(line);
    if (hunk) {
      oldLeft = hunk[1] === undefined ? 1 : Number(hunk[1]);
      newLeft = hunk[3] === undefined ? 1 : Number(hunk[3]);
      lineNo = Number(hunk[2]) || 1;
    }
  }
  return out;
}

const MAX_TEXT = 200;

/**
 * Added lines that reach into test-framework internals. Files the harness restores (protected)
 * never run as patched and are skipped; in files that look like tests only the rules that honest
 * test code never needs count.
 */
export function auditPatch(text: string, parsed: ParsedPatch, isProtected: (p: string) => boolean): AuditFinding[] {
  const findings: AuditFinding[] = [];
  for (const a of addedLines(text, parsed.strip)) {
    if (isProtected(a.file)) continue;
    const rules = rulesBrokenBy(a.text, looksLikeTest(a.file));
    if (!rules.length) continue;
    const trimmed = a.text.trim();
    const shown = trimmed.length > MAX_TEXT ? `${trimmed.slice(0, MAX_TEXT)}…` : trimmed;
    findings.push({ file: a.file, line: a.line, rule: rules.map((r) => r.id).join(', '), text: shown });
  }
  return findings;
}

/** `calc.py:3 [pytest-internals] from _pytest.reports import TestReport`, for reasons and reports. */
export function describeFinding(f: AuditFinding): string {
  return `${f.file}:${f.line} [${f.rule}] ${f.text}`;
}

/** The findings in one sentence: the first few, and how many more. */
export function describeAudit(findings: readonly AuditFinding[], max = 3): string {
  const shown = findings.slice(0, max).map(describeFinding).join('; ');
  return findings.length > max ? `${shown} and ${findings.length - max} more` : shown;
}
