import type { FixtureResult, TestPhase } from '../pipeline/result.js';
import { auditLines } from '../scoring/suspicion.js';
import { EXPECTED, NOT_SCORED } from '../scoring/verdicts.js';
import type { Report } from './report.js';

/** A tiny XML serializer: elements, attributes, text. Enough for JUnit, and escaped properly. */
export interface XmlNode {
  name: string;
  attrs?: Record<string, string | number | undefined>;
  children?: (XmlNode | string)[];
}

/** A string escapeXml leaves as it is (most of a report's): it goes out without a pass of each replacement. */
const PLAIN = /^[^\u0000-\u0008\u000B\u000C\u000E-\u001F&<>"'\uD800-\uDFFF\uFFFE\uFFFF]*$/;

/**
 * XML 1.0 cannot carry most control characters at all, not even as character references, so they
 * are written visibly (`\u001b`); lone surrogates likewise. Markup characters become entities.
 */
export function escapeXml(s: string): string {
  if (PLAIN.test(s)) return s;
  return s
    .replace(
      /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
    )
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

/** An attribute's value: escaped, and its line breaks and tabs kept as references (a parser would make them spaces). */
function attrValue(v: string): string {
  const e = escapeXml(v);
  return /[\t\n\r]/.test(e) ? e.replace(/\n/g, '&#10;').replace(/\r/g, '&#13;').replace(/\t/g, '&#9;') : e;
}

export function serializeXml(node: XmlNode, depth = 0): string {
  const pad = '  '.repeat(depth);
  let attrs = '';
  for (const [k, v] of Object.entries(node.attrs ?? {})) if (v !== undefined) attrs += ` ${k}="${attrValue(String(v))}"`;
  const children = node.children ?? [];
  if (!children.length) return `${pad}<${node.name}${attrs}/>`;
  if (children.every((c) => typeof c === 'string'))
    return `${pad}<${node.name}${attrs}>${children.map((c) => escapeXml(c as string)).join('')}</${node.name}>`;
  const inner = children.map((c) => (typeof c === 'string' ? `${pad}  ${escapeXml(c)}` : serializeXml(c, depth + 1))).join('\n');
  return `${pad}<${node.name}${attrs}>\n${inner}\n${pad}</${node.name}>`;
}

const secs = (ms: number) => (ms / 1000).toFixed(3);

function phaseLines(name: string, p: TestPhase | null): string[] {
  if (!p) return [`${name}: did not run`];
  const bad = p.tests.filter((t) => t.status === 'failed' || t.status === 'error');
  return [
    `${name}: ${p.state}, exit ${p.exitCode}, ${p.counts.failed + p.counts.errors} failed / ${p.counts.passed} passed (${p.source})`,
    ...bad.map((t) => `  ✘ ${t.id}${t.message ? `\n    ${t.message.split('\n').join('\n    ')}` : ''}`),
    ...p.problems.map((x) => `  ! ${x}`),
  ];
}

/** The story of a fixture in plain text, for the failure body and system-out. */
function details(f: FixtureResult): string {
  const graded = [
    f.failToPass ? `failToPass ${f.failToPass.passed}/${f.failToPass.total}` : '',
    f.passToPass ? `passToPass ${f.passToPass.passed}/${f.passToPass.total}` : '',
  ].filter(Boolean);
  const patch = f.patch
    ? [
        `patch: ${f.patch.status} (${f.patch.source})${f.patch.reason ? `: ${f.patch.reason}` : ''}${f.patch.tampered.length ? `; tampered: ${f.patch.tampered.join(', ')}` : ''}`,
      ]
    : [];
  return [
    `${f.verdict}: ${f.reason}`,
    ...(graded.length ? [graded.join(', ')] : []),
    ...patch,
    ...auditLines(f.patch).map((l) => `audit: ${l}`),
    ...phaseLines('RED', f.red),
    ...phaseLines('GREEN', f.green),
  ].join('\n');
}

function testcase(report: Report, f: FixtureResult): XmlNode {
  const children: XmlNode[] = [];
  const message = `${f.verdict}: ${f.reason}`;
  // A harness or fixture problem is an <error> (nothing was graded); a graded miss is a <failure>.
  if (NOT_SCORED.has(f.verdict)) children.push({ name: 'error', attrs: { type: f.verdict, message }, children: [details(f)] });
  else if (!EXPECTED.has(f.verdict)) children.push({ name: 'failure', attrs: { type: f.verdict, message }, children: [details(f)] });
  else children.push({ name: 'system-out', children: [details(f)] });
  return {
    name: 'testcase',
    attrs: { classname: `redgreen.${report.mode}.${report.subject}`, name: f.fixtureId, time: secs(f.durationMs) },
    children: [
      {
        name: 'properties',
        children: [prop('verdict', f.verdict), prop('backend', f.backend), ...(f.title ? [prop('title', f.title)] : [])],
      },
      ...children,
    ],
  };
}

const prop = (name: string, value: string): XmlNode => ({ name: 'property', attrs: { name, value } });

function testsuite(report: Report): XmlNode {
  const failures = report.fixtures.filter((f) => !EXPECTED.has(f.verdict) && !NOT_SCORED.has(f.verdict)).length;
  const errors = report.fixtures.filter((f) => NOT_SCORED.has(f.verdict)).length;
  return {
    name: 'testsuite',
    attrs: {
      name: `redgreen ${report.mode} · ${report.subject}`,
      id: report.runId,
      tests: report.fixtures.length,
      failures,
      errors,
      skipped: 0,
      time: secs(report.durationMs),
      timestamp: report.startedAt.replace(/Z$/, ''),
      hostname: report.backend,
    },
    children: [
      {
        name: 'properties',
        children: [
          prop('runId', report.runId),
          prop('mode', report.mode),
          prop('subject', report.subject),
          prop('backend', report.backend),
          prop('denominators', `all ${report.summary.denominators.all}, scored ${report.summary.denominators.scored}`),
        ],
      },
      ...report.fixtures.map((f) => testcase(report, f)),
      ...(report.unfinished.length
        ? [{ name: 'system-err', children: [`interrupted: did not finish: ${report.unfinished.join(', ')}`] }]
        : []),
    ],
  };
}

/** One testsuite per run, one testcase per fixture; the verdict and its reason in the failure. */
export function renderJunit(reports: readonly Report[]): string {
  const all = reports.flatMap((r) => r.fixtures);
  const root: XmlNode = {
    name: 'testsuites',
    attrs: {
      name: 'redgreen',
      tests: all.length,
      failures: all.filter((f) => !EXPECTED.has(f.verdict) && !NOT_SCORED.has(f.verdict)).length,
      errors: all.filter((f) => NOT_SCORED.has(f.verdict)).length,
      time: secs(reports.reduce((a, r) => a + r.durationMs, 0)),
    },
    children: reports.map(testsuite),
  };
  return `<?xml version="1.0" encoding="UTF-8"?>\n${serializeXml(root)}\n`;
}
