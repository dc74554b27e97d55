import { lazyXmlParser } from './xml.js';
import type { TestCase } from './types.js';

/** The module name pytest loads with `-p`; the file is written into the scratch folder. */
export const PYTEST_PLUGIN_MODULE = 'redgreen_pytest';

/**
 * redgreen's own record of a pytest run, a second signal beside the JUnit XML. Loaded with -p, it
 * is imported before any project code (conftest files, test modules and what they import): it
 * keeps the pytest internals that make and write reports, records each test's outcome from a hook
 * wrapper that runs outermost, and at the end of the session names the internals something
 * replaced. The record travels in the JUnit XML as the global property "redgreen": a report
 * without it was not finished by this pytest run.
 */
export const PYTEST_PLUGIN_SOURCE = String.raw`"""redgreen's record of this pytest run (harness/results/pytest-plugin.ts)."""
import inspect
import json
import sys

import _pytest.junitxml
import _pytest.python
import _pytest.reports
import _pytest.runner
import pytest

_WATCHED = [
    ("_pytest.reports", "TestReport", ("from_item_and_call", "__init__")),
    ("_pytest.reports", "BaseReport", ("passed", "failed", "skipped")),
    ("_pytest.runner", "CallInfo", ("from_call", "__init__")),
    ("_pytest.runner", None, ("call_and_report", "call_runtest_hook", "runtestprotocol", "pytest_runtest_makereport")),
    ("_pytest.junitxml", "LogXML", ("pytest_runtest_logreport", "pytest_sessionfinish", "finalize", "node_reporter")),
    ("_pytest.junitxml", "_NodeReporter", ("append_pass", "append_failure", "append_error", "append_skipped", "to_xml", "finalize")),
    ("_pytest.python", "Function", ("runtest",)),
    ("_pytest.python", None, ("pytest_pyfunc_call",)),
]


def _current(modname, owner, name):
    value = sys.modules.get(modname)
    for part in (owner, name):
        if part is not None and value is not None:
            value = inspect.getattr_static(value, part, None)
    return value


_KEYS = [(m, None, None) for m in sorted({w[0] for w in _WATCHED})]
for _m, _o, _names in _WATCHED:
    if _o:
        _KEYS.append((_m, _o, None))
    _KEYS.extend((_m, _o, _n) for _n in _names)
_ORIGINAL = {k: _current(*k) for k in _KEYS}
_TESTS = {}
_MADE = set()
_FORGED = []


def _note(nodeid, when, outcome):
    status = _TESTS.get(nodeid)
    if outcome == "failed":
        status = "failed" if when == "call" or status == "failed" else "error"
    elif outcome == "skipped":
        status = "skipped" if status in (None, "passed") else status
    elif status is None:
        status = "passed"
    _TESTS[nodeid] = status


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    result = yield
    report = result.get_result()
    # An exception in the test (not a skip) that ends as a pass was turned into one after the fact.
    raised = call.excinfo is not None and not call.excinfo.errisinstance(pytest.skip.Exception)
    forged = raised and report.outcome == "passed"
    if forged:
        _FORGED.append(item.nodeid)
    _MADE.add(item.nodeid)
    _note(item.nodeid, call.when, "failed" if forged else report.outcome)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_logreport(report):
    # Tests run elsewhere (pytest-xdist workers) reach this process only as reports.
    if report.nodeid not in _MADE:
        _note(report.nodeid, report.when, report.outcome)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session, exitstatus):
    # pytest's JUnit writer is a registered plugin object in every version.
    xml = next((p for p in session.config.pluginmanager.get_plugins() if isinstance(p, _ORIGINAL[("_pytest.junitxml", "LogXML", None)])), None)
    if xml is None:
        return
    replaced = [".".join(p for p in k if p) for k in _KEYS if _current(*k) is not _ORIGINAL[k]]
    record = {"v": 1, "exitstatus": int(exitstatus), "tests": _TESTS, "forged": _FORGED, "replaced": replaced}
    xml.add_global_property("redgreen", json.dumps(record, separators=(",", ":")))
`;

interface PluginRecord {
  exitstatus: number;
  tests: Record<string, string>;
  forged: string[];
  replaced: string[];
}

const parser = lazyXmlParser({ ignoreAttributes: false, attributeNamePrefix: '', htmlEntities: true, parseAttributeValue: false });

/** The plugin's record in a JUnit XML document, or null when it holds none. */
export function pluginRecord(xml: string): PluginRecord | null {
  try {
    const doc = parser.parse(xml) as { testsuites?: { testsuite?: unknown }; testsuite?: unknown };
    const suites = [doc.testsuites?.testsuite ?? doc.testsuite].flat();
    for (const s of suites as { properties?: { property?: unknown } }[]) {
      for (const p of [s?.properties?.property].flat() as { name?: string; value?: string }[]) {
        if (p?.name === 'redgreen' && p.value) return JSON.parse(p.value) as PluginRecord;
      }
    }
  } catch {
    return null; // an unreadable report is already a problem of its own
  }
  return null;
}

const passing = (s: string | undefined) => s === 'passed';
const failing = (s: string | undefined) => s === 'failed' || s === 'error';
const few = (ids: string[]) => ids.slice(0, 3).join(', ') + (ids.length > 3 ? ` and ${ids.length - 3} more` : '');

/**
 * Where the plugin's record and the JUnit XML disagree. `report` is the XML (null: pytest left
 * none) and `tests` what was read from it (or from the output).
 */
export function pluginDisagreements(report: string | null, tests: readonly TestCase[]): string[] {
  const record = report === null ? null : pluginRecord(report);
  if (!record) {
    if (!tests.length) return []; // nothing ran that could be doubted: the phase is broken anyway
    return [
      report === null
        ? "pytest's run ended before the harness's pytest plugin could record it (no JUnit XML)"
        : "the JUnit XML lacks the harness's pytest plugin record: it was not written by pytest's own run",
    ];
  }
  const out: string[] = [];
  if (record.replaced.length) out.push(`pytest internals were replaced during the run: ${few(record.replaced)}`);
  if (record.forged.length) out.push(`tests that raised were reported as passing: ${few(record.forged)}`);
  const denied = tests.filter((t) => passing(t.status) && !passing(record.tests[t.id]) && record.tests[t.id] !== 'skipped');
  const unseen = denied.filter((t) => record.tests[t.id] === undefined).map((t) => t.id);
  const failed = denied.filter((t) => failing(record.tests[t.id])).map((t) => t.id);
  if (failed.length) out.push(`the JUnit XML says passed where the harness's pytest plugin saw a failure: ${few(failed)}`);
  if (unseen.length) out.push(`the JUnit XML has passing tests the harness's pytest plugin never saw run: ${few(unseen)}`);
  if (record.exitstatus === 1 && !tests.some((t) => failing(t.status))) {
    out.push('pytest ended its session with "tests failed", but the report has no failing test');
  }
  return out;
}
