import picomatch from 'picomatch';

/**
 * Matches protected paths: the manifest's globs plus the runner's own test infrastructure.
 * Like .gitignore, a glob without "/" matches a file name at any depth; a glob with "/" matches
 * the path from the fixture root. (picomatch's `basename` option alone would make every glob
 * with a "/" match nothing.)
 */
export function protectedMatcher(globs: readonly string[]): (p: string) => boolean {
  // Every fixture of a runner shares most globs: compiled once per list, not once per fixture.
  const key = globs.join('\0');
  const known = compiled.get(key);
  if (known) return known;
  const matcher = compile(globs);
  compiled.set(key, matcher);
  return matcher;
}

const compiled = new Map<string, (p: string) => boolean>();

function compile(globs: readonly string[]): (p: string) => boolean {
  const names = globs.filter((g) => !g.includes('/'));
  const paths = globs.filter((g) => g.includes('/'));
  const byName = names.length ? picomatch(names, { dot: true, basename: true }) : () => false;
  const byPath = paths.length ? picomatch(paths, { dot: true }) : () => false;
  return (p) => byName(p) || byPath(p);
}
