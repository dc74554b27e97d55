import { XMLParser } from 'fast-xml-parser';
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

const parser = new XMLParser({
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

/** Reads JUnit XML (any of the common dialects: pytest, node, vitest, surefire, go-junit). */
export function parseJUnit(xml: string): JUnitCase[] {
  const doc = parser.parse(xml) as Node;
  const out: JUnitCase[] = [];
  const visit = (node: Node, suites: string[]) => {
    for (const tc of (node.testcase as Node[] | undefined) ?? []) {
      let status: TestStatus = 'passed';
      let message: string | undefined;
      if (tc.failure) {
        status = 'failed';
        message = messageOf(tc.failure);
      } else if (tc.error) {
        status = 'error';
        message = messageOf(tc.error);
      } else if (tc.skipped) status = 'skipped';
      const time = Number(tc.time);
      out.push({
        name: str(tc.name),
        classname: str(tc.classname),
        ...(tc.file ? { file: str(tc.file) } : {}),
        suites,
        status,
        ...(Number.isFinite(time) ? { durationMs: Math.round(time * 1000) } : {}),
        ...(message ? { message } : {}),
      });
    }
    for (const s of (node.testsuite as Node[] | undefined) ?? []) visit(s, [...suites, str(s.name)]);
  };
  const root = (doc.testsuites as Node | undefined) ?? doc;
  visit(root, []);
  return out;
}

export function toTestCase(c: JUnitCase, id: string): TestCase {
  return {
    id,
    status: c.status,
    ...(c.durationMs !== undefined ? { durationMs: c.durationMs } : {}),
    ...(c.message ? { message: c.message } : {}),
  };
}
