/**
 * Source of `callerFile()` for a module preloaded into a test runner (uvu-reporter.ts,
 * tape-names.ts): the file of the first stack frame outside the runner's package and the module
 * itself, where the test being defined was called from; null if none. Needs `fileURLToPath` in scope.
 */
export function callerFileSource(pkg: string): string {
  return `function callerFile() {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 60;
  const stack = String(new Error().stack);
  Error.stackTraceLimit = limit;
  for (const line of stack.split('\\n').slice(1)) {
    const m = /((?:file:\\/\\/)?\\/[^()]+?):\\d+:\\d+\\)?$/.exec(line.trim());
    if (!m) continue;
    const file = m[1].startsWith('file://') ? fileURLToPath(m[1]) : m[1];
    if (file === __filename || /[\\\\/]node_modules[\\\\/]${pkg}[\\\\/]/.test(file)) continue;
    return file;
  }
  return null;
}`;
}
