import os from 'node:os';
import { describe, expect, test } from 'vitest';
import { measure } from '../../harness/bench/measured.js';

// What the bench's figures rest on: a command's own CPU, and the machine's, which holds it.
describe.skipIf(process.platform !== 'linux')('bench measurements', () => {
  test("the machine's CPU holds the CPU of the command measured", async () => {
    // 300 ms of CPU, however busy the machine is.
    const spin = 'const u = () => { const c = process.cpuUsage(); return (c.user + c.system) / 1000; }; while (u() < 300);';
    const m = await measure(`${JSON.stringify(process.execPath)} -e "${spin}"`, os.tmpdir());
    expect(m.treeCpuMs).toBeGreaterThanOrEqual(280);
    // Both are counted in 10 ms ticks: a tick or two either way.
    expect(m.machineCpuMs).not.toBeNull();
    expect(m.machineCpuMs!).toBeGreaterThanOrEqual(m.treeCpuMs - 30);
  });
});
