import { defineConfig } from 'vitest/config';

/**
 * Three layers, each with a time budget that fits what its tests do, about three times what the
 * slowest of them takes on a quiet 2-core machine, so a busy machine (CI beside other work) still
 * passes. A test that needs more says so itself ({ timeout }), with the reason.
 */
export default defineConfig({
  test: {
    // Suites spawn real runners and sandboxes; two cores are busy enough with two files at a time.
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        // Parsers over captured output, patches and git on small trees: well under a second each.
        test: { name: 'unit', include: ['test/unit/**/*.test.ts'], testTimeout: 15_000, hookTimeout: 15_000 },
      },
      {
        extends: true,
        // Real sandboxes, runners, engines and the e2b test double, through the library.
        test: { name: 'integration', include: ['test/integration/**/*.test.ts'], testTimeout: 120_000, hookTimeout: 180_000 },
      },
      {
        extends: true,
        // The built CLI as a user runs it. One recorded selfcheck of the bundled fixtures is shared.
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          // The temp-folder check first: its teardown is the last (test/helpers/temp-leaks.setup.ts).
          // What was left out here for a missing tool is said at the very end (left-out.setup.ts).
          globalSetup: ['test/helpers/left-out.setup.ts', 'test/helpers/temp-leaks.setup.ts', 'test/e2e/recorded-run.setup.ts'],
          testTimeout: 180_000,
          hookTimeout: 300_000,
        },
      },
    ],
  },
});
