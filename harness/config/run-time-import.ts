/**
 * import() of a module outside redgreen's own code: a package loaded only by the command that
 * needs it, or a user's config file. The CLI runs its bundle from V8's code cache, and Node 20
 * gives code compiled from that cache no loader for an import() of its own ("A dynamic import
 * callback was not specified"), so in the bundle this calls the one its entry passes in (see
 * scripts/bundle.mjs and harness/code-cache.ts). Every such import() goes through here.
 */
export function runTimeImport<T>(specifier: string): Promise<T> {
  return import(specifier) as Promise<T>;
}
