import { lazyXmlParser } from './xml.js';
import { firstLines, type TestCase, type TestStatus } from './types.js';

export interface JUnitCase {
  name: string;
  classname: string;
  file?: string;
  /** Names of the enclosing <testsuite> elements, outermost first. */
  suites: string[];
  status: TestStatus;
  durationMs?: number;
  message?: string;
}

type Node = Record<string, unknown>;

const parser = lazyXmlParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  textNodeName: '#text',
  parseAttributeValue: false,
  parseTagValue: false,
  // Numeric character references (`&#10;` in pytest's message attributes) are only decoded with it.
  htmlEntities: true,
  isArray: (name) => ['testsuite', 'testcase', 'failure', 'error', 'skipped'].includes(name),
});

function str(v: unknown): string {
  return v === undefined || v === null ? '' : String(v);
}

function messageOf(nodes: unknown): string | undefined {
  const n = (nodes as Node[])[0];
  if (n === undefined) return undefined;
  if (typeof n !== 'object') return firstLines(str(n));
  return firstLines(str(n.message) || str(n['#text']));
}

export interface JUnitSuite {
  /** Names of this <testsuite> and of the ones around it, outermost first. */
  path: string[];
  /** Index of the enclosing suite in the list, if any. */
  parent?: number;
  /** failures + errors, as the suite's attributes declare them. */
  declared: number;
  /** Failing and erroring test cases inside it, nested suites included. */
  failing: number;
  /** A <failure> or <error> on the suite itself, outside any test case (a hook that failed). */
  message?: string;
}

function statusOf(tc: Node): { status: TestStatus; message?: string } {
  if (tc.failure) return { status: 'failed', message: messageOf(tc.failure) };
  if (tc.error) return { status: 'error', message: messageOf(tc.error) };
  return { status: tc.skipped ? 'skipped' : 'passed' };
}

/** Test cases and the suites around them (Surefire, go-junit-report and jest-junit nest them). */
export function parseJUnitDocument(xml: string): { cases: JUnitCase[]; suites: JUnitSuite[] } {
  const doc = parser.parse(xml) as Node;
  const cases: JUnitCase[] = [];
  const suites: JUnitSuite[] = [];
  const visit = (node: Node, path: string[], parent?: number): number => {
    let failing = 0;
    for (const tc of (node.testcase as Node[] | undefined) ?? []) {
      const { status, message } = statusOf(tc);
      if (status === 'failed' || status === 'error') failing++;
      const time = Number(tc.time);
      cases.push({
        name: str(tc.name),
        classname: str(tc.classname),
        ...(tc.file ? { file: str(tc.file) } : {}),
        suites: path,
        status,
        ...(Number.isFinite(time) ? { durationMs: Math.round(time * 1000) } : {}),
        ...(message ? { message } : {}),
      });
    }
    for (const s of (node.testsuite as Node[] | undefined) ?? []) {
      const index = suites.length;
      const own = s.failure ?? s.error;
      const suite: JUnitSuite = {
        path: [...path, str(s.name)],
        ...(parent !== undefined ? { parent } : {}),
        declared: (Number(s.failures) || 0) + (Number(s.errors) || 0),
        failing: 0,
        ...(own ? { message: messageOf(own) ?? 'the suite failed outside its tests' } : {}),
      };
      suites.push(suite);
      suite.failing = visit(s, suite.path, index);
      failing += suite.failing;
    }
    return failing;
  };
  visit((doc.testsuites as Node | undefined) ?? doc, []);
  return { cases, suites };
}

/** Reads JUnit XML (any of the common dialects: pytest, node, vitest, surefire, go-junit). */
export function parseJUnit(xml: string): JUnitCase[] {
  return parseJUnitDocument(xml).cases;
}

export function toTestCase(c: JUnitCase, id: string): TestCase {
  return {
    id,
    status: c.status,
    ...(c.durationMs !== undefined ? { durationMs: c.durationMs } : {}),
    ...(c.message ? { message: c.message } : {}),
  };
}
