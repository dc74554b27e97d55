import { afterEach, describe, expect, test, vi } from 'vitest';
import { envelope, EnvelopeReader } from '../../harness/sandbox/e2b/wire/connect.js';
import { envdUrl, resolveConnection } from '../../harness/sandbox/e2b/wire/connection.js';

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('EnvelopeReader', () => {
  test('the same messages whatever the chunking, down to one byte at a time', () => {
    const messages = [{ event: { start: { pid: 1 } } }, { event: { data: { stdout: 'é'.repeat(300) } } }, {}];
    const bytes = Buffer.concat(messages.map((m) => envelope(m)));
    for (const size of [1, 2, 5, 7, 64, bytes.length]) {
      const reader = new EnvelopeReader();
      const got: unknown[] = [];
      for (let i = 0; i < bytes.length; i += size) for (const e of reader.feed(bytes.subarray(i, i + size))) got.push(e.message);
      expect(got, `chunks of ${size}`).toEqual(messages);
      expect(reader.buffered).toBe(0);
    }
  });

  test('flags come through; an empty end-of-stream message is {}; a partial envelope waits', () => {
    const end = Buffer.from([2, 0, 0, 0, 0]);
    const reader = new EnvelopeReader();
    expect([...reader.feed(end.subarray(0, 3))]).toEqual([]);
    expect(reader.buffered).toBe(3);
    expect([...reader.feed(end.subarray(3))]).toEqual([{ flags: 2, message: {} }]);
  });
});

describe('where the wire client sends requests (the SDK’s rules)', () => {
  test('no key, no connection; E2B_API_KEY, E2B_DOMAIN, E2B_API_URL and E2B_SANDBOX_URL as the SDK reads them', () => {
    vi.stubEnv('E2B_API_KEY', '');
    expect(resolveConnection({})).toBeNull();
    vi.stubEnv('E2B_API_KEY', 'k');
    vi.stubEnv('E2B_DOMAIN', 'cube.example');
    expect(resolveConnection({})).toMatchObject({ apiKey: 'k', domain: 'cube.example', apiUrl: 'https://api.cube.example', debug: false });
    vi.stubEnv('E2B_API_URL', 'http://10.0.0.1:3000/');
    vi.stubEnv('E2B_SANDBOX_URL', 'http://10.0.0.1:8080');
    expect(resolveConnection({})).toMatchObject({ apiUrl: 'http://10.0.0.1:3000', sandboxUrl: 'http://10.0.0.1:8080' });
    expect(resolveConnection({ apiKey: 'mine', apiUrl: 'http://a' })).toMatchObject({ apiKey: 'mine', apiUrl: 'http://a' });
  });

  test("a sandbox's envd: one proxy host for E2B's own domains, a host per sandbox elsewhere, the sandbox's own domain first", () => {
    vi.stubEnv('E2B_SANDBOX_URL', '');
    vi.stubEnv('E2B_DEBUG', '');
    const c = (domain: string) => resolveConnection({ apiKey: 'k', domain })!;
    expect(envdUrl(c('e2b.app'), 'sb1', undefined)).toBe('https://sandbox.e2b.app');
    expect(envdUrl(c('e2b.app'), 'sb1', 'e2b.dev')).toBe('https://sandbox.e2b.dev');
    expect(envdUrl(c('cube.example'), 'sb1', undefined)).toBe('https://49983-sb1.cube.example');
    expect(envdUrl(c('e2b.app'), 'sb1', 'self.example')).toBe('https://49983-sb1.self.example');
    expect(envdUrl({ ...c('e2b.app'), sandboxUrl: 'http://proxy:1' }, 'sb1', 'x')).toBe('http://proxy:1');
    vi.stubEnv('E2B_DEBUG', 'true');
    const debug = resolveConnection({ apiKey: 'k' })!;
    expect([debug.apiUrl, envdUrl(debug, 'sb1', undefined)]).toEqual(['http://localhost:3000', 'http://localhost:49983']);
  });
});
