import { mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { simpleGit } from 'simple-git';

/** One commit of a test repository: files written (null removes one) and its message. */
export interface CommitSpec {
  message: string;
  files: Record<string, string | null>;
  /** A merge of a side branch holding these files instead of a plain commit. */
  merge?: boolean;
}

const ENV = (n: number) => {
  // Fixed identities and dates: the same history gives the same shas on every run.
  const date = new Date(Date.UTC(2024, 0, 1) + n * 3_600_000).toISOString();
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: os.tmpdir(),
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_AUTHOR_NAME: 'Dev',
    GIT_AUTHOR_EMAIL: 'dev@example.com',
    GIT_COMMITTER_NAME: 'Dev',
    GIT_COMMITTER_EMAIL: 'dev@example.com',
    GIT_AUTHOR_DATE: date,
    GIT_COMMITTER_DATE: date,
  };
};

async function writeFiles(dir: string, files: Record<string, string | null>): Promise<void> {
  for (const [rel, content] of Object.entries(files)) {
    const abs = path.join(dir, rel);
    if (content === null) await rm(abs, { force: true });
    else {
      await mkdir(path.dirname(abs), { recursive: true });
      await writeFile(abs, content);
    }
  }
}

/** A git repository at `dir` with these commits on `main`, in order; returns their shas. */
export async function makeGitRepo(dir: string, commits: readonly CommitSpec[]): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const git = (n: number) => simpleGit(dir).env(ENV(n));
  await git(0).raw(['init', '-q', '-b', 'main']);
  const shas: string[] = [];
  for (const [n, c] of commits.entries()) {
    if (c.merge) {
      await git(n).raw(['checkout', '-q', '-b', `side-${n}`]);
      await writeFiles(dir, c.files);
      await git(n).raw(['add', '-A']);
      await git(n).raw(['commit', '-q', '-m', `${c.message} (side)`]);
      await git(n).raw(['checkout', '-q', 'main']);
      await git(n).raw(['merge', '-q', '--no-ff', '-m', c.message, `side-${n}`]);
    } else {
      await writeFiles(dir, c.files);
      await git(n).raw(['add', '-A']);
      await git(n).raw(['commit', '-q', '--allow-empty', '-m', c.message]);
    }
    shas.push((await git(n).revparse(['HEAD'])).trim());
  }
  return shas;
}

/**
 * An isolated redgreen cache (`XDG_CACHE_HOME`) for a test: mirrors, trees and setup entries of
 * its own, with the machine's shared npm download cache linked in so installs stay warm.
 */
export async function isolatedCache(base: string): Promise<string> {
  const xdg = path.join(base, 'xdg-cache');
  await mkdir(path.join(xdg, 'redgreen'), { recursive: true });
  const shared = sharedNpmCache();
  await mkdir(shared, { recursive: true });
  await symlink(shared, path.join(xdg, 'redgreen', 'npm'));
  return xdg;
}

/** The npm download cache redgreen's sandboxes share on this machine. */
export function sharedNpmCache(): string {
  return path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'redgreen', 'npm');
}
