import picomatch from 'picomatch';

/**
 * Matches protected paths: the manifest's globs plus the runner's own test infrastructure.
 * A glob without "/" matches at any depth, like .gitignore.
 */
export function protectedMatcher(globs: readonly string[]): (p: string) => boolean {
  if (!globs.length) return () => false;
  const isMatch = picomatch([...globs], { dot: true, basename: true });
  return (p) => isMatch(p);
}
