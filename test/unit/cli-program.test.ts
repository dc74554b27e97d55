import { describe, expect, test } from 'vitest';
import { program } from '../../harness/cli-program.js';
import { runCli } from '../helpers/cli.js';

const commands = (...args: string[]) => program(['node', 'redgreen', ...args]).commands;
const names = (...args: string[]) => commands(...args).map((c) => c.name());

describe('the CLI sets up the command its command line names', () => {
  test('that command alone, with its subcommands and options', () => {
    expect(names('validate', 'bug01', '--json')).toEqual(['validate']);
    const [report] = commands('report', 'merge', 'run-a');
    expect(report!.name()).toBe('report');
    expect(report!.commands.map((c) => c.name())).toEqual(['merge']);
    expect(commands('selfcheck')[0]!.options.map((o) => o.long)).toEqual(
      expect.arrayContaining(['--backend', '--pool', '--template', '--reporter', '--write']),
    );
  });

  test('each command set up alone has the options and subcommands it has among all of them', () => {
    for (const cmd of commands()) {
      const [alone] = commands(cmd.name());
      expect(
        alone!.options.map((o) => o.flags),
        cmd.name(),
      ).toEqual(cmd.options.map((o) => o.flags));
      expect(
        alone!.commands.map((c) => c.name()),
        cmd.name(),
      ).toEqual(cmd.commands.map((c) => c.name()));
    }
  });

  test('every command for --help, no command, help <command> or a name it does not know', () => {
    const all = names();
    expect(all).toEqual(expect.arrayContaining(['selfcheck', 'run', 'validate', 'list', 'report', 'image', 'gc', 'cache']));
    for (const args of [['--help'], ['help', 'validate'], ['valdate'], ['-V']]) expect(names(...args)).toEqual(all);
  });

  test('a mistyped command is still refused with the nearest name (exit 2)', async () => {
    const r = await runCli(['valdate']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown command 'valdate'");
    expect(r.stderr).toContain('Did you mean validate?');
  });
});
