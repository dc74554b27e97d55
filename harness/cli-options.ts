import type { Command } from 'commander';
import { BACKENDS, backendFlags } from './sandbox/backends.js';

// The option groups several commands share, and how a command's options are resolved (its
// config file, then what was typed). Commands themselves are in cli-program.ts.

export const collect = (v: string, prev: string[]) => [...prev, v];

/** A command's options: its config file's values, then what was typed (never commander's defaults over the config). */
export async function optionsOf<S extends import('zod').ZodObject>(schema: () => S, cmd: Command, extra: Record<string, unknown> = {}) {
  const { resolveOptions, typedOptions } = await import('./commands/resolve-options.js');
  return resolveOptions(schema, { ...typedOptions(cmd), ...extra }, 'cli');
}

export function pathOptions(cmd: Command): Command {
  return cmd
    .option('--config <file>', 'config file (default: the nearest redgreen.config.{ts,mjs,js,json} from here up)')
    .option('--root <dir>', 'project folder with fixtures/ and oracles/ (default: the folder of the nearest redgreen.config.*, else here)')
    .option('--fixtures <dir>', 'fixtures folder (default: <root>/fixtures)')
    .option('--oracles <dir>', 'oracles folder (default: <root>/oracles)')
    .option('--reports <dir>', 'reports folder (default: <root>/reports)')
    .option('--transcripts <dir>', 'transcripts folder (default: <root>/transcripts)');
}

/** Which backend and how to reach it (e2b); shared by selfcheck, run and replay --verify. */
export function backendOptions(cmd: Command): Command {
  cmd
    // Checked with the registry after the config file loads (it may register a backend).
    .option(
      '--backend <name>',
      `sandbox backend: ${BACKENDS.map((b) => b.name).join(', ')} or auto (default: local; auto: the strongest available here)`,
    )
    .option('--pass-env <name>', 'pass a host environment variable into sandboxes (repeatable)', collect, []);
  // Each backend's own options, from its descriptor in the registry.
  for (const f of backendFlags()) cmd.option(f.flags, f.description, f.default);
  return cmd;
}

export function runOptions(cmd: Command): Command {
  return backendOptions(cmd)
    .option('-j, --concurrency <n>', 'fixtures run in parallel (default: CPU count)')
    .option('--repeat <n>', 'run each test phase n times; tests that change status are flaky (default: 1)')
    .option('--json', 'print the report as JSON on stdout')
    .option('--resume <run-id>', 'continue an interrupted run: finished fixtures are kept, the others run again')
    .option('--force', 'with --resume: resume even if fixtures or oracles changed since')
    .option('--no-cache', 'run every setup instead of reusing cached results')
    .option('--tag <tag>', "only fixtures with this tag (manifest's tags; repeatable)", collect, [])
    .option('--shard <i/n>', 'run part i of n of the selection (split by fixture id, the same on every machine); combine with report merge')
    .option('--bail <n>', 'stop after n fixtures missed their expectation (the rest can be finished with --resume)')
    .option(
      '--reporter <name>',
      'what is printed and written: default, json, junit, md, html, github (repeatable; junit=<file> …)',
      collect,
      [],
    );
}
