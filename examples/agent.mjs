#!/usr/bin/env node
// A stand-in for your agent, to see `redgreen run --agent` end to end:
//   npx redgreen run --agent "node $PWD/examples/agent.mjs"
// redgreen runs the command in a sandbox of its own holding the fixture (after its setup), with
//   REDGREEN_ISSUE_FILE  the bug report (a copy of ISSUE.md)
//   REDGREEN_WORKDIR     the fixture's files: edit them in place
//   REDGREEN_FIXTURE     the fixture's id
// (also as --issue/--workdir arguments when the command passes {issue} and {workdir}) and grades
// the git diff of what the command changed, in a fresh sandbox. A real agent reads the
// issue and works out a fix; this one knows a single repair (the starter fixture js_cart_total,
// whose discount is applied twice) and leaves every other fixture unchanged, so one fixture ends
// `resolved` and the others `unresolved`.
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

const arg = (name) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const workdir = arg('--workdir') ?? process.env.REDGREEN_WORKDIR ?? process.cwd();
const issue = await readFile(arg('--issue') ?? process.env.REDGREEN_ISSUE_FILE ?? path.join(workdir, 'ISSUE.md'), 'utf8').catch(() => '');
console.log(`fixture ${process.env.REDGREEN_FIXTURE}: ${issue.split('\n')[0]}`);

const KNOWN = {
  js_cart_total: {
    file: 'src/cart.js',
    from: '  const discounted = applyPercent(subtotal, discountPercent);\n  return discounted + shippingCents;\n',
    to: '  return subtotal + shippingCents;\n',
  },
};

const repair = KNOWN[process.env.REDGREEN_FIXTURE ?? ''];
if (!repair) {
  console.log('no idea how to fix this one: leaving it as it is');
} else {
  const file = path.join(workdir, repair.file);
  const text = await readFile(file, 'utf8');
  if (!text.includes(repair.from)) throw new Error(`${repair.file} does not look as expected`);
  await writeFile(file, text.replace(repair.from, repair.to));
  console.log(`edited ${repair.file}`);
}
