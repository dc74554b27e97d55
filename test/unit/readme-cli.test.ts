import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { describe, expect, test } from 'vitest';
import { program } from '../../harness/cli-program.js';
import { REPO } from '../helpers/cli.js';

const README = readFileSync(path.join(REPO, 'README.md'), 'utf8');

/** Every command of the CLI with its full name (`report merge`, `cache prune`). */
function commands(cmd: Command, prefix = ''): { name: string; cmd: Command }[] {
  return cmd.commands.flatMap((c) => {
    const name = `${prefix}${c.name()}`;
    return [{ name, cmd: c }, ...commands(c, `${name} `)];
  });
}
const ALL = commands(program());

/** The shell lines of the README's sh blocks that call redgreen. */
function examples(): string[] {
  const blocks = [...README.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
  return blocks.flatMap((b) => b.split('\n')).filter((l) => /(^|\s)npx redgreen /.test(l));
}

describe('README and CLI agree', () => {
  test('every command and every option of the CLI is in the README', () => {
    const missing: string[] = [];
    for (const { name, cmd } of ALL) {
      if (!README.includes(`redgreen ${name}`)) missing.push(`redgreen ${name}`);
      for (const o of cmd.options) if (o.long && o.long !== '--help' && !README.includes(o.long)) missing.push(`${name} ${o.long}`);
    }
    expect(missing).toEqual([]);
  });

  test('every README example names a command that exists and only options that command has', () => {
    const wrong: string[] = [];
    const lines = examples();
    expect(lines.length).toBeGreaterThan(30);
    for (const line of lines) {
      // Words as the shell splits them: a quoted argument is one word.
      const words: string[] = line.replace(/\s#.*$/, '').match(/"[^"]*"|'[^']*'|\S+/g) ?? [];
      const args = words.slice(words.indexOf('redgreen') + 1).filter(Boolean);
      // The longest command name the line starts with (`report merge` before `report`).
      const found = ALL.filter(
        ({ name }) => args.join(' ').startsWith(name) && [' ', undefined].includes(args.join(' ')[name.length]),
      ).sort((a, b) => b.name.length - a.name.length)[0];
      if (!found) {
        wrong.push(`${line}: no such command`);
        continue;
      }
      const known = new Set(found.cmd.options.flatMap((o) => [o.long, o.short]).filter(Boolean));
      for (const a of args) if (/^--?[a-z]/.test(a) && !known.has(a.split('=')[0]!)) wrong.push(`${line}: ${found.name} has no ${a}`);
      if (/<[a-z-]+>|preds\.jsonl|my-agent/.test(line.replace(/#.*$/, ''))) wrong.push(`${line}: a placeholder`);
    }
    expect(wrong).toEqual([]);
  });
});
