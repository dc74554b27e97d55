import type { CommitSpec } from './git-repos.js';

/**
 * Twenty commits of a small Python text library, as a project's history looks: five real fixes
 * (source and test, RED before and GREEN after), and fifteen commits that are not fixtures, each
 * for a reason `mine` must name: the first commit, docs and chores, test-only and source-only
 * changes, a merge, a fix whose new test already passed (not RED), one whose test still fails
 * (not GREEN), one too large, and one whose setup fails.
 */
type Funcs = Record<'slug' | 'words' | 'title' | 'pad' | 'initials' | 'trunc', string>;

const BUGGY: Funcs = {
  slug: `def slugify(text):\n    return "-".join(text.lower().split(" "))\n`,
  words: `def word_count(text):\n    return len(text.split(" "))\n`,
  title: `def title_case(text):\n    return text.capitalize()\n`,
  pad: `def pad_left(text, width):\n    return " " * (width - len(text)) + text\n`,
  initials: `def initials(name):\n    return "".join(p[0] for p in name.split(" "))\n`,
  trunc: `def truncate(text, n):\n    return text[:n] + "..."\n`,
};

/** A fix that is not one: truncate() still adds "..." at exactly n characters. */
const HALF_FIXED_TRUNC = `def truncate(text, n):\n    if len(text) < n:\n        return text\n    return text[:n] + "..."\n`;

const FIXED: Funcs = {
  slug: `def slugify(text):\n    return "-".join(text.lower().split())\n`,
  words: `def word_count(text):\n    return len(text.split())\n`,
  title: `def title_case(text):\n    return " ".join(w.capitalize() for w in text.split(" "))\n`,
  pad: `def pad_left(text, width):\n    return " " * max(0, width - len(text)) + text\n`,
  initials: `def initials(name):\n    return "".join(p[0].upper() for p in name.split())\n`,
  trunc: `def truncate(text, n):\n    if len(text) <= n:\n        return text\n    return text[:n] + "..."\n`,
};

function module(f: Funcs, extra = ''): string {
  return `"""Small text helpers."""\n\n\n${[f.slug, f.words, f.title, f.pad, f.initials, f.trunc].join('\n\n')}${extra}`;
}

const TESTS: Record<string, string> = {
  base: `from textkit import slugify, word_count, title_case, pad_left, initials\n\n\ndef test_slug_simple():\n    assert slugify("Hello World") == "hello-world"\n\n\ndef test_words_simple():\n    assert word_count("a b c") == 3\n\n\ndef test_pad_simple():\n    assert pad_left("ab", 4) == "  ab"\n`,
  slug: `\n\ndef test_slug_double_space():\n    assert slugify("Hello  World") == "hello-world"\n`,
  wordsMore: `\n\ndef test_words_one():\n    assert word_count("word") == 1\n`,
  words: `\n\ndef test_words_trailing_space():\n    assert word_count("a b ") == 2\n`,
  padPasses: `\n\ndef test_pad_exact():\n    assert pad_left("abcd", 4) == "abcd"\n`,
  title: `\n\ndef test_title_every_word():\n    assert title_case("hello big world") == "Hello Big World"\n`,
  truncExact: `\n\ndef test_truncate_exact():\n    from textkit import truncate\n    assert truncate("abc", 3) == "abc"\n`,
  truncShort: `\n\ndef test_truncate_short():\n    from textkit import truncate\n    assert truncate("ab", 3) == "ab"\n`,
  table: `\n\ndef test_table():\n    from textkit import TABLE\n    assert TABLE[0] == 0\n`,
  initials: `\n\ndef test_initials_upper():\n    assert initials("ada  lovelace") == "AL"\n`,
  setup: `\n\ndef test_title_double_space():\n    assert title_case("a  b") == "A B"\n`,
};

const test = (...parts: (keyof typeof TESTS)[]) => ['base', ...parts].map((p) => TESTS[p]).join('');

export interface MineHistory {
  history: CommitSpec[];
  /** Indexes (in `history`) of the five real fixes. */
  fixes: number[];
  /** Why each other commit is not kept, by index: a pattern its reason must match. */
  reasons: Record<number, RegExp>;
}

export function mineHistory(): MineHistory {
  let f: Funcs = { ...BUGGY };
  const fix = (k: keyof Funcs) => (f = { ...f, [k]: FIXED[k] });
  const big = `\n\nTABLE = [\n${Array.from({ length: 150 }, (_, i) => `    ${i},`).join('\n')}\n]\n`;
  const history: CommitSpec[] = [
    /* 0 */ {
      message: 'Start textkit',
      files: { 'pytest.ini': '[pytest]\npythonpath = .\n', 'textkit.py': module(f), 'tests/test_textkit.py': test() },
    },
    /* 1 */ { message: 'Write a README', files: { 'README.md': '# textkit\n' } },
    /* 2 */ {
      message: 'Fix slugify on repeated spaces',
      files: { 'textkit.py': module(fix('slug')), 'tests/test_textkit.py': test('slug') },
    },
    /* 3 */ { message: 'Add an editorconfig', files: { '.editorconfig': 'root = true\n' } },
    /* 4 */ { message: 'Test word_count on one word', files: { 'tests/test_textkit.py': test('slug', 'wordsMore') } },
    /* 5 */ {
      message: 'Fix word_count on trailing spaces',
      files: { 'textkit.py': module(fix('words')), 'tests/test_textkit.py': test('slug', 'wordsMore', 'words') },
    },
    /* 6 */ {
      message: 'Reword the module docstring',
      files: { 'textkit.py': module(f).replace('Small text helpers.', 'Text helpers, small ones.') },
    },
    /* 7 */ {
      message: 'Test pad_left at its exact width',
      files: {
        'textkit.py': module(f).replace('Small text helpers.', 'Text helpers.'),
        'tests/test_textkit.py': test('slug', 'wordsMore', 'words', 'padPasses'),
      },
    },
    /* 8 */ {
      message: 'Fix title_case to capitalise every word',
      files: {
        'textkit.py': module(fix('title')).replace('Small text helpers.', 'Text helpers.'),
        'tests/test_textkit.py': test('slug', 'wordsMore', 'words', 'padPasses', 'title'),
      },
    },
    /* 9 */ { message: 'Merge the changelog branch', merge: true, files: { 'CHANGELOG.md': '# Changes\n' } },
    /* 10 */ { message: 'Document pad_left', files: { 'README.md': '# textkit\n\npad_left pads on the left.\n' } },
    /* 11 */ {
      message: 'Try to fix truncate on short texts',
      files: {
        'textkit.py': module({ ...f, trunc: HALF_FIXED_TRUNC }).replace('Small text helpers.', 'Text helpers.'),
        'tests/test_textkit.py': test('slug', 'wordsMore', 'words', 'padPasses', 'title', 'truncExact'),
      },
    },
    /* 12 */ {
      message: 'Fix truncate at exactly n characters',
      files: {
        'textkit.py': module(fix('trunc')).replace('Small text helpers.', 'Text helpers.'),
        'tests/test_textkit.py': test('slug', 'wordsMore', 'words', 'padPasses', 'title', 'truncExact', 'truncShort'),
      },
    },
    /* 13 */ {
      message: 'Add a lookup table',
      files: {
        'textkit.py': module(f, big).replace('Small text helpers.', 'Text helpers.'),
        'tests/test_textkit.py': test('slug', 'wordsMore', 'words', 'padPasses', 'title', 'truncExact', 'truncShort', 'table'),
      },
    },
    /* 14 */ { message: 'Require a vendored wheel', files: { 'requirements.txt': './vendor/textdeps-1.0-py3-none-any.whl\n' } },
    /* 15 */ {
      message: 'Fix title_case on repeated spaces',
      files: {
        'textkit.py': module((f = { ...f, title: f.title.replace('text.split(" ")', 'text.split()') }), big).replace(
          'Small text helpers.',
          'Text helpers.',
        ),
        'tests/test_textkit.py': test('slug', 'wordsMore', 'words', 'padPasses', 'title', 'truncExact', 'truncShort', 'table', 'setup'),
      },
    },
    /* 16 */ { message: 'Drop the vendored wheel', files: { 'requirements.txt': null } },
    /* 17 */ {
      message: 'Fix initials on double spaces and lower case',
      files: {
        'textkit.py': module(fix('initials'), big).replace('Small text helpers.', 'Text helpers.'),
        'tests/test_textkit.py': test(
          'slug',
          'wordsMore',
          'words',
          'padPasses',
          'title',
          'truncExact',
          'truncShort',
          'table',
          'setup',
          'initials',
        ),
      },
    },
    /* 18 */ { message: 'Note the initials fix', files: { 'CHANGELOG.md': '# Changes\n\n- initials\n' } },
    /* 19 */ { message: 'Release 1.0', files: { VERSION: '1.0\n' } },
  ];
  return {
    history,
    fixes: [2, 5, 8, 12, 17],
    reasons: {
      0: /first commit/,
      1: /changes no test file/,
      3: /changes no test file/,
      4: /changes only test files/,
      6: /changes no test file/,
      7: /^not RED/,
      9: /merge commit/,
      10: /changes no test file/,
      11: /^not GREEN/,
      13: /too large/,
      14: /changes no test file/,
      15: /^setup failed/,
      16: /changes no test file/,
      18: /changes no test file/,
      19: /changes no test file/,
    },
  };
}
