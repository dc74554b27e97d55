import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { keepReason } from '../../harness/sandbox/core/gc.js';
import {
  currentOwner,
  LEGACY_START_LABEL,
  labelledLiveness,
  liveness,
  OWNER_LABEL,
  ownerLabels,
} from '../../harness/sandbox/core/owner.js';

/** Owner liveness, shared by host folders (owner.json), Docker labels and E2B metadata. */
describe('owner liveness', () => {
  const me = currentOwner();
  const deadPid = spawnSync('true').pid!;
  const ticks = me.start.slice(me.start.indexOf(':') + 1);

  it('knows this process, and tells a dead pid, a reused pid and another host apart', () => {
    expect(me.start).toMatch(/^[0-9a-f-]+:\d+$/);
    expect(liveness(me)).toBe('alive');
    expect(liveness({ ...me, pid: deadPid })).toBe('dead');
    expect(liveness({ ...me, start: 'another-boot:1' })).toBe('dead');
    expect(liveness({ ...me, host: 'another-host.invalid' })).toBe('other-host');
    // Recorded where /proc was missing: the pid is all there is to check.
    expect(liveness({ ...me, start: '' })).toBe('alive');
  });

  it('reads labels, and still judges sandboxes labelled by older redgreen versions (start ticks under the legacy key)', () => {
    expect(labelledLiveness(ownerLabels())).toBe('alive');
    expect(labelledLiveness({ ...ownerLabels(), [OWNER_LABEL.start]: 'gone' })).toBe('dead');
    const legacy = { [OWNER_LABEL.host]: me.host, [OWNER_LABEL.pid]: String(me.pid) };
    expect(labelledLiveness({ ...legacy, [LEGACY_START_LABEL]: ticks })).toBe('alive');
    expect(labelledLiveness({ ...legacy, [LEGACY_START_LABEL]: '1' })).toBe('dead');
    expect(labelledLiveness({ ...ownerLabels(), [LEGACY_START_LABEL]: '1' })).toBe('dead');
    expect(labelledLiveness({})).toBe('other-host');
  });

  it('gc keeps named, live and foreign runs as the options say', () => {
    const owner = (l: 'alive' | 'dead' | 'other-host') => () => l;
    expect(keepReason('r', owner('dead'), {})).toBeNull();
    expect(keepReason('r', owner('alive'), {})).toBe('alive');
    expect(keepReason('r', owner('other-host'), {})).toBe('other-host');
    expect(keepReason('r', owner('other-host'), { allHosts: true })).toBeNull();
    expect(keepReason('r', owner('dead'), { keepRun: 'r' })).toBe('this-run');
    expect(keepReason('r', owner('alive'), { runIds: ['r'] })).toBeNull();
    expect(keepReason('q', owner('dead'), { runIds: ['r'] })).toBe('another-run');
  });
});
