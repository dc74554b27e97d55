/**
 * TEST DOUBLE of E2B (see README.md), as a process of its own: prints `{"apiUrl","sandboxUrl"}` on
 * one line once it listens, and serves until stdin closes or it gets SIGTERM, killing every
 * sandbox it holds on the way out. The bench runs it apart so the harness's CPU is its own.
 */
import { startE2BDouble } from './server.js';

const double = await startE2BDouble({ ...(process.env.E2B_DOUBLE_API_KEY ? { apiKey: process.env.E2B_DOUBLE_API_KEY } : {}) });
// unref'd servers would let this process exit at once; stdin keeps it alive until the parent goes.
process.stdin.resume();
let closing = false;
const stop = () => {
  if (closing) return;
  closing = true;
  void double.close().finally(() => process.exit(0));
};
process.stdin.on('end', stop);
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.stdout.write(`${JSON.stringify({ apiUrl: double.apiUrl, sandboxUrl: double.sandboxUrl })}\n`);
