import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { describe, expect, test } from 'vitest';
import type { FixtureResult } from '../../harness/pipeline/result.js';
import { escapeXml, renderJunit, serializeXml } from '../../harness/reporters/junit-xml.js';
import { ReportSchema, type Report } from '../../harness/reporters/report.js';
import type { Verdict } from '../../harness/scoring/verdicts.js';
import { reportOf } from '../helpers/reports.js';

const phase = (failed: string[], passed: string[]) => ({
  state: failed.length ? 'fail' : 'pass',
  exitCode: failed.length ? 1 : 0,
  durationMs: 100,
  source: 'junit',
  problems: [],
  flaky: [],
  runs: 1,
  counts: { passed: passed.length, failed: failed.length, errors: 0, skipped: 0, total: failed.length + passed.length },
  tests: [
    ...failed.map((id) => ({ id, status: 'failed' as const, message: `assert 1 == 2 <in ${id}>` })),
    ...passed.map((id) => ({ id, status: 'passed' as const })),
  ],
});
function fixture(id: string, verdict: Verdict, reason: string): FixtureResult {
  return {
    fixtureId: id,
    title: `${id} title`,
    verdict,
    reason,
    backend: 'local',
    sandboxId: null,
    startedAt: '2026-01-01T00:00:00.000Z',
    durationMs: 1234,
    timings: {},
    spans: [],
    red: phase(['t::a'], ['t::b']) as FixtureResult['red'],
    green:
      verdict === 'valid' ? (phase([], ['t::a', 't::b']) as FixtureResult['green']) : (phase(['t::a'], ['t::b']) as FixtureResult['green']),
    patch: { source: 'oracle', sha256: null, status: 'applied', files: ['a.py'], tampered: [], fuzzy: false },
    observed: null,
  };
}
const report = (fixtures: FixtureResult[]): Report => ReportSchema.parse(reportOf('run-1', fixtures));
const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  isArray: (name) => ['testsuite', 'testcase', 'property'].includes(name),
});

describe('junit.xml', () => {
  test('escapes markup and writes control characters visibly (XML 1.0 cannot carry them at all)', () => {
    expect(escapeXml(`a<b>&"c"'d'`)).toBe('a&lt;b&gt;&amp;&quot;c&quot;&apos;d&apos;');
    expect(escapeXml('bell\u0007 esc\u001b nul\u0000 tab\t nl\n')).toBe('bell\\u0007 esc\\u001b nul\\u0000 tab\t nl\n');
    expect(escapeXml('lone \uD800 surrogate, pair 😀')).toBe('lone \\ud800 surrogate, pair 😀');
    const xml = serializeXml({ name: 'x', attrs: { v: 'line1\nline2 "q" \u001b' }, children: ['<&>\u0001'] });
    expect(XMLValidator.validate(xml)).toBe(true);
    expect(xml).toBe('<x v="line1&#10;line2 &quot;q&quot; \\u001b">&lt;&amp;&gt;\\u0001</x>');
  });

  test('one testcase per fixture: a failure with the verdict and reason, an error for infra errors, nothing for a pass', () => {
    const hostile = 'still failing: t::a <script>alert(1)</script> & "quotes" \u001b[31mred\u001b[0m';
    const xml = renderJunit([
      report([
        fixture('ok', 'valid', '1 fail→pass'),
        fixture('bad', 'not_green', hostile),
        fixture('infra', 'infra_error', 'create: sandbox died'),
      ]),
    ]);
    expect(XMLValidator.validate(xml)).toBe(true);
    const doc = parser.parse(xml) as {
      testsuites: { tests: string; failures: string; errors: string; testsuite: { testcase: Record<string, unknown>[] }[] };
    };
    expect(doc.testsuites).toMatchObject({ tests: '3', failures: '1', errors: '1' });
    const [ok, bad, infra] = doc.testsuites.testsuite[0]!.testcase as {
      name: string;
      time: string;
      failure?: { type: string; message: string; '#text': string };
      error?: { type: string; message: string };
    }[];
    expect(ok).toMatchObject({ name: 'ok', time: '1.234' });
    expect(ok!.failure).toBeUndefined();
    expect(bad!.failure!.type).toBe('not_green');
    expect(bad!.failure!.message).toBe(`not_green: ${hostile.replace(/\u001b/g, '\\u001b')}`);
    expect(bad!.failure!['#text']).toContain('✘ t::a');
    expect(bad!.failure!['#text']).toContain('assert 1 == 2 <in t::a>');
    expect(infra!.error).toMatchObject({ type: 'infra_error', message: 'infra_error: create: sandbox died' });
  });

  test('several runs are several testsuites', () => {
    const xml = renderJunit([report([fixture('a', 'valid', 'ok')]), report([fixture('a', 'not_green', 'no')])]);
    const doc = parser.parse(xml) as { testsuites: { tests: string; failures: string; testsuite: unknown[] } };
    expect(doc.testsuites.testsuite).toHaveLength(2);
    expect(doc.testsuites).toMatchObject({ tests: '2', failures: '1' });
  });
});
