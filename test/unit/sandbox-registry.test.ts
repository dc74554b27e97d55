import { Command } from 'commander';
import { describe, expect, test } from 'vitest';
import { runOptionsSchema } from '../../harness/commands/options.js';
import { BACKENDS, backendFlags, backendNamed, backendNames, pickAuto } from '../../harness/sandbox/backends.js';

describe('backend registry', () => {
  test('names are unique, each descriptor parses its defaults, and auto is a choice but not a backend', () => {
    const names = BACKENDS.map((b) => b.name);
    expect(new Set(names).size).toBe(names.length);
    expect(backendNames()).toEqual(names);
    expect(runOptionsSchema().safeParse({ backend: 'auto' }).success).toBe(true);
    for (const b of BACKENDS) expect(() => b.options.parse({}), b.name).not.toThrow();
    expect(() => backendNamed('auto')).toThrow(/unknown backend "auto"/);
    expect(() => backendNamed('nope')).toThrow(expect.objectContaining({ code: 'USAGE', hint: `backends: ${names.join(', ')}` }));
  });

  test("each flag's key is the option name commander gives it, and a key shared by two backends means one flag", () => {
    for (const f of backendFlags()) {
      const cmd = new Command().exitOverride().option(f.flags, f.description);
      cmd.parse([f.flags.split(' ')[0]!, '1'], { from: 'user' });
      expect(cmd.opts(), f.flags).toEqual({ [f.key]: '1' });
      // Every backend whose schema has this field declares the flag itself.
      for (const b of BACKENDS.filter((x) => f.key in x.options.shape))
        expect(
          b.flags.map((x) => x.key),
          b.name,
        ).toContain(f.key);
    }
  });

  test("the run options carry every backend's own options, checked by the backend's schema", () => {
    const RunOptionsSchema = runOptionsSchema();
    const parsed = RunOptionsSchema.parse({ backend: 'docker', pool: '3', createRate: '5' }) as Record<string, unknown>;
    expect(parsed).toMatchObject({ pool: 3, createRate: 5 });
    expect(RunOptionsSchema.safeParse({ pool: '-1' }).success).toBe(false);
    expect(RunOptionsSchema.safeParse({ backend: 'nope' }).success).toBe(false);
  });

  test('auto never picks a remote backend, whatever its probe says', async () => {
    const remote = BACKENDS.filter((b) => b.remote);
    expect(remote.map((b) => b.autoRank)).toEqual(remote.map(() => undefined));
    const picked = await pickAuto({}, { passEnv: [], cacheDir: '/nonexistent' });
    expect(picked.remote).toBe(false);
    expect((await picked.probe(picked.options.parse({}), { passEnv: [], cacheDir: '/nonexistent' })).ok).toBe(true);
  });
});
