import { readFile } from 'node:fs/promises';
import { RedgreenError, tailOf } from '../errors.js';
import type { Fixture } from '../fixtures/load.js';
import { runCommand, type FixtureContext } from '../pipeline/context.js';
import { runSetup } from '../pipeline/setup.js';
import type { PatchInput } from '../pipeline/patch-phase.js';
import type { PatchProvider, ProviderContext } from '../pipeline/provider.js';
import { DEFAULT_EXCLUDES } from '../sandbox/core/tree.js';
import type { ExecResult, Sandbox } from '../sandbox/core/types.js';

export interface CommandAgentOptions {
  timeoutSec: number;
  /** Isolating backends: let the agent reach the network (a model API, say). */
  network: boolean;
}

/** Single-quotes a value for sh. */
export const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** Fills {issue}, {workdir} and {fixture} in an agent command, shell-quoted. */
export function fillTemplate(template: string, values: Record<string, string>): string {
  return template.replace(/\{(issue|workdir|fixture)\}/g, (_, k: string) => shellQuote(values[k] ?? ''));
}

const GIT = 'git -c user.name=redgreen -c user.email=redgreen@localhost -c core.autocrlf=false -c core.hooksPath=/dev/null';
const MAX_PATCH_BYTES = 64 * 1024 * 1024;

/**
 * An agent given as a command line. It runs in a sandbox of its own holding the fixture (after
 * setup) with the issue text and a time limit; its patch is the `git diff` of the workspace
 * afterwards against the workspace as setup left it, binary files included. Grading then happens in a fresh sandbox, so nothing the
 * agent left behind but its patch can influence the tests.
 */
export function commandAgent(template: string, options: CommandAgentOptions): PatchProvider {
  return {
    kind: 'agent',
    subject: `agent:${template}`,
    async patchFor(fixture: Fixture, pc: ProviderContext): Promise<PatchInput> {
      const source = `agent:${template}`;
      const sandbox = await pc.backend.create({ runId: pc.runId, fixtureId: `${fixture.id}-agent` });
      try {
        const ctx: FixtureContext = { fixture, sandbox, signal: pc.signal, emit: pc.emit, setupCache: pc.setupCache };
        // The tree the fixture's fingerprint read, as the fixture's own upload takes it: not walked again.
        await sandbox.uploadDir(fixture.treeDir, { skip: fixture.treeSkip, ...(pc.tree ? { tree: pc.tree } : {}) });
        const issueFile = `${sandbox.scratchDir}/ISSUE.md`;
        await sandbox.writeFiles([{ path: issueFile, content: await readFile(fixture.issuePath).catch(() => Buffer.from('')) }]);
        const exclude = DEFAULT_EXCLUDES.filter((e) => e !== '.git').join('\n');
        const before = await commitAll(
          ctx,
          `git init -q && printf '%s\\n' ${shellQuote(exclude)} >> .git/info/exclude && ${GIT} add -A && ${GIT} commit -q --no-verify --allow-empty -m baseline && git rev-parse HEAD`,
        );
        const setupFailure = await runSetup(ctx);
        if (setupFailure)
          throw new RedgreenError(setupFailure.timedOut ? 'SANDBOX_FAILED' : setupFailure.code, `agent sandbox: ${setupFailure.reason}`);
        // What setup wrote (package-lock.json, generated files) is not the agent's change.
        const afterSetup = await commitAll(
          ctx,
          `${GIT} add -A && ${GIT} commit -q --no-verify --allow-empty -m setup && git rev-parse HEAD`,
        );
        const command = fillTemplate(template, { issue: issueFile, workdir: sandbox.workdir, fixture: fixture.id });
        const run = await runCommand(ctx, 'agent', 'agent', command, {
          timeoutMs: options.timeoutSec * 1000,
          network: options.network,
          env: { REDGREEN_ISSUE_FILE: issueFile, REDGREEN_WORKDIR: sandbox.workdir, REDGREEN_FIXTURE: fixture.id },
        });
        if (run.aborted) throw new RedgreenError('INTERRUPTED', 'interrupted');
        const diff = await agentDiff(sandbox, before, afterSetup, pc.signal);
        if (diff.exitCode !== 0) {
          return {
            source,
            text: null,
            missing: `the agent's workspace has no usable git history (${diff.stderr.trim().split('\n').at(-1) ?? ''})`,
            timedOut: run.timedOut,
          };
        }
        if (diff.truncated) return { source, text: null, missing: `the agent's diff is larger than ${MAX_PATCH_BYTES} bytes` };
        // An agent that could not start, or failed, and changed nothing made no attempt to grade.
        if (!run.timedOut && run.exitCode !== 0 && !diff.stdout.trim()) {
          return {
            source,
            text: null,
            agentError: `the agent command exited ${run.exitCode} having changed nothing: ${tailOf(run.stderr) || '(no stderr)'}`,
          };
        }
        return {
          source,
          text: diff.stdout,
          ...(run.timedOut
            ? { timedOut: true, missing: `the agent hit its ${options.timeoutSec}s time limit and was stopped with its process tree` }
            : {}),
        };
      } finally {
        await sandbox.destroy();
      }
    },
  };
}

/** Commits the whole workspace in the agent's sandbox and returns the commit. */
async function commitAll(ctx: FixtureContext, script: string): Promise<string> {
  const r = await runCommand(ctx, 'agent', 'git baseline', script, { timeoutMs: 120_000 });
  if (r.exitCode !== 0)
    throw new RedgreenError(
      'SANDBOX_FAILED',
      `could not record the workspace baseline with git: ${r.stderr.trim().split('\n').at(-1) ?? ''}`,
    );
  return r.stdout.trim();
}

/**
 * The files the agent changed since setup, each as a diff from the fixture as uploaded: the patch
 * applies to the fixture (grading stages it there), and where setup had changed the same file,
 * the file the agent left is what grading ends up with.
 */
async function agentDiff(sandbox: Sandbox, before: string, afterSetup: string, signal: AbortSignal): Promise<ExecResult> {
  const options = { timeoutMs: 120_000, maxOutputBytes: MAX_PATCH_BYTES, signal };
  const changed = await sandbox.exec(`${GIT} add -A && ${GIT} diff --cached --name-only -z --no-renames ${afterSetup}`, options);
  const paths = changed.stdout.split('\0').filter(Boolean);
  if (changed.exitCode !== 0 || !paths.length) return changed;
  const diff = ['--literal-pathspecs', 'diff', '--cached', '--binary', '--no-color', '--no-ext-diff', '--no-renames', before, '--'];
  return sandbox.exec([...GIT.split(' '), ...diff, ...paths], options);
}
