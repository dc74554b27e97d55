import path from 'node:path';
import { makeGitRepo, type CommitSpec } from './git-repos.js';

/**
 * The repositories the hand-written SWE-bench instances in test/data/swe-bench point at, built
 * in a temp folder as `<owner>__<name>` (SWE-bench's own naming). Their commits have fixed
 * authors and dates, so the shas the instances name are the same on every machine.
 */
const TEXTKIT = `"""Small text helpers."""\n\n\ndef slugify(text):\n    return "-".join(text.lower().split(" "))\n\n\ndef word_count(text):\n    return len(text.split(" "))\n`;
const TEXTKIT_TESTS = `from textkit import slugify, word_count\n\n\ndef test_slug_simple():\n    assert slugify("Hello World") == "hello-world"\n\n\ndef test_words_simple():\n    assert word_count("a b c") == 3\n`;

export const SWEBENCH_REPOS: Record<string, CommitSpec[]> = {
  acme__textkit: [
    {
      message: 'Start textkit',
      files: { 'pytest.ini': '[pytest]\npythonpath = .\n', 'textkit.py': TEXTKIT, 'tests/test_textkit.py': TEXTKIT_TESTS },
    },
    { message: 'Write a README', files: { 'README.md': '# textkit\n' } },
    {
      message: 'Fix slugify on repeated spaces (#12)',
      files: {
        'textkit.py': TEXTKIT.replace('text.lower().split(" ")', 'text.lower().split()'),
        'tests/test_textkit.py': `${TEXTKIT_TESTS}\n\ndef test_slug_double_space():\n    assert slugify("Hello  World") == "hello-world"\n`,
      },
    },
  ],
  acme__ledger: [
    {
      message: 'Start ledger',
      files: {
        'money.py': 'def cents(amount):\n    """The amount in whole cents."""\n    return int(amount * 100)\n',
        'test_money.py':
          'import unittest\n\nfrom money import cents\n\n\nclass TestCents(unittest.TestCase):\n    def test_whole(self):\n        self.assertEqual(cents(2), 200)\n',
      },
    },
  ],
};

/** Builds every repository under `dir`; returns the shas of each one's commits. */
export async function makeSweBenchRepos(dir: string): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const [name, history] of Object.entries(SWEBENCH_REPOS)) out[name] = await makeGitRepo(path.join(dir, name), history);
  return out;
}
