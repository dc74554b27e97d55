// The least a Node.js harness must itself do for each trivial fixture, as a reference for
// redgreen's own CPU per fixture on the same machine: read the manifest, copy the fixture's files
// into a folder, run the test command, `git apply` the oracle and run the tests again through one
// long-lived `sh` per worker (a line in, the exit code out), append a JSON line to a transcript,
// remove the files. No isolation, no process-tree kill, no output capture, no report: it is not a
// harness, only the floor under one. Run by trivial.ts as
// `node floor-harness.js <usage-file> <project> <parallel>`; writes its own CPU to <usage-file>.
import { spawn } from 'node:child_process';
import { appendFileSync, copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { writeOwnUsage } from './own-usage.js';

const [usageFile, project, parallel] = process.argv.slice(2);
if (!usageFile || !project || !parallel) throw new Error('usage: floor-harness.js <usage-file> <project> <parallel>');

/** Evaluates each line it reads (`cd <folder> && <command>`) in a subshell, and answers with its exit code. */
const SERVER = `while IFS= read -r line; do (eval "$line") </dev/null >/dev/null 2>&1; echo $?; done`;

function shellServer(): { run: (line: string) => Promise<number>; end: () => void } {
  const child = spawn('sh', ['-c', SERVER], { stdio: ['pipe', 'pipe', 'inherit'] });
  const waiting: ((code: number) => void)[] = [];
  let buf = '';
  child.stdout.setEncoding('latin1').on('data', (d: string) => {
    buf += d;
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      waiting.shift()!(Number(buf.slice(0, nl)));
      buf = buf.slice(nl + 1);
    }
  });
  return {
    run: (line) => new Promise((resolve) => (waiting.push(resolve), child.stdin.write(`${line}\n`))),
    end: () => child.stdin.end(),
  };
}

const q = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
const ids = readdirSync(path.join(project, 'fixtures')).sort();
const work = mkdtempSync(path.join(os.tmpdir(), 'rg-bench-floor-'));
let next = 0;
/** Fixtures whose work did not go RED, applied, GREEN: the floor would then measure something else. */
const wrong: string[] = [];

async function worker(n: number): Promise<void> {
  const server = shellServer();
  const dir = path.join(work, `w${n}`);
  mkdirSync(dir);
  const transcript = `${dir}.jsonl`;
  try {
    for (let id = ids[next++]; id !== undefined; id = ids[next++]) {
      const src = path.join(project!, 'fixtures', id);
      const manifest = JSON.parse(readFileSync(path.join(src, 'fixture.json'), 'utf8')) as { test: { command: string } };
      for (const f of readdirSync(src)) if (f !== 'fixture.json' && f !== 'ISSUE.md') copyFileSync(path.join(src, f), path.join(dir, f));
      const test = `cd ${q(dir)} && ${manifest.test.command}`;
      const red = await server.run(test);
      const applied = await server.run(`cd ${q(dir)} && git apply ${q(path.join(project!, 'oracles', `${id}.patch`))}`);
      const green = await server.run(test);
      if (red === 0 || applied !== 0 || green !== 0) wrong.push(id);
      appendFileSync(transcript, `${JSON.stringify({ id, red, applied, green })}\n`);
      for (const f of readdirSync(dir)) rmSync(path.join(dir, f), { recursive: true, force: true });
    }
  } finally {
    server.end();
  }
}

try {
  await Promise.all(Array.from({ length: Number(parallel) }, (_, n) => worker(n)));
} finally {
  rmSync(work, { recursive: true, force: true });
}
if (wrong.length) throw new Error(`not RED → applied → GREEN: ${wrong.slice(0, 5).join(', ')} (${wrong.length} fixtures)`);
writeOwnUsage(usageFile);
