import { firstLines, numberRepeats, type TestCase, type TestStatus } from './types.js';

/**
 * One TAP reader for every producer (ava --tap, tape, node-tap, node --test's tap reporter).
 * TAP has two shapes in the wild:
 * - points are tests (ava, node-tap, node:test): `ok 3 - a › adds`, subtests indented by four
 *   spaces and closed by their parent's point; a test id is the path of point names;
 * - points are assertions grouped under `# name` comments (tape and its kin): `# adds` then
 *   `ok 1 should be equal`; a test is a group, failed when one of its assertions failed.
 * A stream whose first line after the version is a comment other than `# Subtest:` has the
 * second shape. Directives: `# SKIP` and `# TODO` make a test skipped (a failing todo is not a
 * failure). A stream that stops without its plan ended early: the test it was in is an error.
 */

interface Point {
  ok: boolean;
  name: string;
  directive?: 'skip' | 'todo';
  indent: number;
  /** The YAML diagnostics after the point, dedented. */
  yaml?: string;
}

const VERSION = /^TAP version \d+\s*$/i;
const PLAN = /^1\.\.(\d+)/;
const POINT = /^(not )?ok\b\s*(\d+)?\s*(?:-\s+)?(.*)$/;
const SUMMARY = /^#\s*((tests|pass|fail|skip|todo|cancelled|suites)\s+\d+|duration_ms\b.*|ok|not ok)\s*$/i;

function splitDirective(text: string): { name: string; directive?: 'skip' | 'todo' } {
  // An unescaped `#` starts the directive; `\#` is part of the name.
  const m = /^(.*?)(?<!\\)#\s*(SKIP|TODO)\S*\b.*$/i.exec(text);
  const name = (m ? m[1]! : text.replace(/(?<!\\)#\s*time=\S+\s*$/, '')).replace(/\\#/g, '#').trim();
  if (!m) return { name };
  return { name, directive: m[2]!.toLowerCase() === 'skip' ? 'skip' : 'todo' };
}

/** The lines of a TAP stream as points with their diagnostics, comments and plans. */
type Line = { kind: 'point'; point: Point } | { kind: 'comment'; indent: number; text: string } | { kind: 'plan'; indent: number };

function lex(stream: string): Line[] {
  const out: Line[] = [];
  const lines = stream.replace(/\r\n/g, '\n').split('\n');
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!;
    const indent = /^ */.exec(raw)![0].length;
    const line = raw.trim();
    if (!line || VERSION.test(line)) continue;
    if (PLAN.test(line)) {
      out.push({ kind: 'plan', indent });
      continue;
    }
    if (line.startsWith('#')) {
      out.push({ kind: 'comment', indent, text: line.replace(/^#\s?/, '') });
      continue;
    }
    const m = POINT.exec(line);
    if (!m) continue; // output of the tests themselves, between TAP lines
    const point: Point = { ok: !m[1], ...splitDirective(m[3] ?? ''), indent };
    // YAML diagnostics: `---` right after the point, indented deeper, up to `...`.
    if (lines[i + 1]?.trim() === '---' && /^ */.exec(lines[i + 1]!)![0].length > indent) {
      const yaml: string[] = [];
      let j = i + 2;
      for (; j < lines.length && lines[j]!.trim() !== '...'; j++) yaml.push(lines[j]!);
      const pad = Math.min(...yaml.filter((l) => l.trim()).map((l) => /^ */.exec(l)![0].length));
      point.yaml = yaml.map((l) => l.slice(Number.isFinite(pad) ? pad : 0)).join('\n');
      i = j;
    }
    out.push({ kind: 'point', point });
  }
  return out;
}

/** The value of a YAML key of the diagnostics: a plain or quoted scalar, or a block (`|-`, `>-`). */
function yamlValue(yaml: string, key: string): string | undefined {
  const lines = yaml.split('\n');
  const i = lines.findIndex((l) => l.startsWith(`${key}:`));
  if (i < 0) return undefined;
  const value = lines[i]!.slice(key.length + 1).trim();
  if (/^[|>][-+]?$/.test(value)) {
    const block = [];
    for (const l of lines.slice(i + 1)) {
      if (l.trim() && !/^\s/.test(l)) break;
      block.push(l.replace(/^ {2}/, ''));
    }
    return (value.startsWith('>') ? block.join(' ') : block.join('\n')).trim() || undefined;
  }
  const quoted = /^(['"])(.*)\1$/.exec(value);
  return (quoted ? quoted[2]!.replace(/''/g, "'") : value) || undefined;
}

/** What a failure's diagnostics say: their `message` or `error`, else the diagnostics themselves. */
function messageOf(p: Point, prefix?: string): string | undefined {
  const yaml = p.yaml?.trim();
  const said = yaml && (yamlValue(yaml, 'message') ?? yamlValue(yaml, 'error'));
  return firstLines([prefix, said || yaml].filter(Boolean).join('\n'));
}

function statusOf(p: Point): TestStatus {
  if (p.directive) return 'skipped';
  return p.ok ? 'passed' : 'failed';
}

const ENDED_EARLY = 'the TAP stream ended inside this test (the run crashed or was killed)';

/** Points are tests; indented points are subtests of the point that closes them. */
function testsFromPoints(lines: Line[]): TestCase[] {
  type Node = { point: Point; children: Node[] };
  const collected = new Map<number, Node[]>();
  const headers = new Map<number, string>(); // `# Subtest: name` by indent, for a stream cut short
  for (const l of lines) {
    if (l.kind === 'comment' && /^Subtest: /.test(l.text)) headers.set(l.indent, l.text.slice('Subtest: '.length).trim());
    if (l.kind !== 'point') continue;
    const d = l.point.indent;
    const children = [...collected].filter(([i]) => i > d).flatMap(([i, nodes]) => (collected.delete(i), nodes));
    collected.set(d, [...(collected.get(d) ?? []), { point: l.point, children }]);
  }
  const tests: TestCase[] = [];
  const visit = (n: Node, path: string[]): boolean => {
    const id = [...path, n.point.name].join(' > ');
    let failing = false;
    for (const c of n.children) failing = visit(c, [...path, n.point.name]) || failing;
    const status = statusOf(n.point);
    if (!n.children.length) tests.push({ id, status, ...(status === 'failed' ? { message: messageOf(n.point)! } : {}) });
    else if (status === 'failed' && !failing) {
      // A parent that failed with no failing subtest broke on its own (a hook, an uncaught error).
      tests.push({ id, status: 'error', message: messageOf(n.point) ?? 'failed outside its subtests' });
    }
    return failing || status === 'failed';
  };
  // The stream's own level is its least indented line; points left deeper never got their parent.
  const top = Math.min(...lines.map((l) => (l.kind === 'point' ? l.point.indent : l.indent)));
  const planned = lines.some((l) => l.kind === 'plan' && l.indent === top);
  for (const n of collected.get(top) ?? []) visit(n, []);
  const open = [...collected].filter(([i]) => i > top).sort(([a], [b]) => a - b);
  // Subtests whose parent never closed: the stream stopped inside that parent.
  for (const [indent, nodes] of open) {
    const parent =
      [...headers]
        .filter(([i]) => i < indent)
        .sort(([a], [b]) => a - b)
        .at(-1)?.[1] ?? '(unfinished test)';
    for (const n of nodes) visit(n, [parent]);
    tests.push({ id: parent, status: 'error', message: ENDED_EARLY });
  }
  if (!planned && !open.length && tests.length) {
    const last = headers.get(top);
    if (last && !tests.some((t) => t.id === last || t.id.startsWith(`${last} > `)))
      tests.push({ id: last, status: 'error', message: ENDED_EARLY });
  }
  return tests;
}

/** Points are assertions; a `# name` comment starts the test they belong to (tape). */
function testsFromGroups(lines: Line[]): TestCase[] {
  type Group = { name: string; directive?: 'skip' | 'todo'; points: Point[] };
  const groups: Group[] = [];
  let planned = false;
  for (const l of lines) {
    if (l.kind === 'plan' && l.indent === 0) planned = true;
    if (l.kind === 'comment' && l.indent === 0 && !SUMMARY.test(`# ${l.text}`)) {
      const d = /^(SKIP|TODO)\s+(.*)$/.exec(l.text);
      groups.push(
        d ? { name: d[2]!.trim(), directive: d[1] === 'SKIP' ? 'skip' : 'todo', points: [] } : { name: l.text.trim(), points: [] },
      );
    }
    if (l.kind === 'point') groups.at(-1)?.points.push(l.point);
  }
  return groups.map((g, i): TestCase => {
    if (g.directive) return { id: g.name, status: 'skipped' };
    const failed = g.points.filter((p) => statusOf(p) === 'failed');
    if (failed.length) {
      const message = failed.map((p) => messageOf(p, p.name)).join('\n');
      return { id: g.name, status: 'failed', message: firstLines(message)! };
    }
    if (!planned && i === groups.length - 1) return { id: g.name, status: 'error', message: ENDED_EARLY };
    const ran = g.points.filter((p) => statusOf(p) === 'passed');
    return { id: g.name, status: ran.length || !g.points.length ? 'passed' : 'skipped' };
  });
}

/** Test cases of a TAP stream; same-named tests are numbered (`adds [2]`), in stream order. */
export function parseTap(stream: string): { tests: TestCase[]; bailOut?: string } {
  const bail = /^\s*Bail out!\s*(.*)$/m.exec(stream);
  const lines = lex(stream);
  const first = lines.find((l) => l.kind !== 'plan');
  const grouped = first?.kind === 'comment' && !/^Subtest: /.test(first.text);
  const tests = grouped ? testsFromGroups(lines) : testsFromPoints(lines);
  if (bail) tests.push({ id: 'Bail out!', status: 'error', message: bail[1]?.trim() || 'the producer bailed out' });
  return { tests: numberRepeats(tests), ...(bail ? { bailOut: bail[1]?.trim() ?? '' } : {}) };
}
