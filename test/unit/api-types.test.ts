import { describe, expect, expectTypeOf, test } from 'vitest';
import type { z } from 'zod';
import type { BackendOptions, RedgreenConfig, SelfcheckOptions } from '../../harness/api/types.js';
import { configKeys } from '../../harness/commands/resolve-options.js';
import { backendOptionsShape } from '../../harness/sandbox/backends.js';
import type { dockerBackend } from '../../harness/sandbox/docker/descriptor.js';
import type { e2bBackend } from '../../harness/sandbox/e2b/descriptor.js';

/** Every key of BackendOptions, once: the compiler refuses a missing or an extra one. */
const BACKEND_KEYS = { pool: true, template: true, e2bUser: true, warm: true, createRate: true } satisfies Record<
  keyof BackendOptions,
  true
>;

describe('the API types match the schemas they describe', () => {
  test("BackendOptions has exactly the built-in backends' option keys, with the types their schemas take", () => {
    expect(Object.keys(BACKEND_KEYS).sort()).toEqual(Object.keys(backendOptionsShape()).sort());
    expectTypeOf<z.input<typeof dockerBackend.options>>().toExtend<Pick<BackendOptions, 'pool'>>();
    expectTypeOf<z.input<typeof e2bBackend.options>>().toExtend<Pick<BackendOptions, 'template' | 'e2bUser' | 'warm' | 'createRate'>>();
  });

  test("a config takes the project settings, never one invocation's work; the API options every flag of the command", () => {
    expect(configKeys()).toEqual(expect.arrayContaining(['backend', 'concurrency', 'agentTimeout', 'passEnv', 'reporter', 'pool', 'root']));
    for (const k of ['ids', 'tag', 'shard', 'json', 'resume', 'force', 'config']) expect(configKeys()).not.toContain(k);
    expectTypeOf<'backend' | 'concurrency' | 'agentTimeout' | 'passEnv' | 'reporter' | 'pool' | 'root'>().toExtend<keyof RedgreenConfig>();
    expectTypeOf<'resume'>().not.toExtend<keyof RedgreenConfig>();
    expectTypeOf<'concurrency' | 'ids' | 'tag' | 'shard' | 'bail' | 'reporter' | 'signal' | 'onProgress'>().toExtend<
      keyof SelfcheckOptions
    >();
    expectTypeOf<{ concurency: number }>().not.toExtend<SelfcheckOptions>();
  });
});
