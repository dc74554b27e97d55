import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Suites spawn real runners and sandboxes; two cores are busy enough with two files at a time.
    maxWorkers: 2,
  },
});
