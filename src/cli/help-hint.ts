// What follows a flag error: one line naming where the help is (`see skyq dlq list --help`),
// on every command and subcommand, instead of the whole help text.
import type { Command } from 'commander';

/** "dlq list" for `skyq dlq list`, "" for the program itself. */
export function commandPathOf(command: Command): string {
  const names: string[] = [];
  for (let at: Command | null = command; at?.parent; at = at.parent) names.unshift(at.name());
  return names.join(' ');
}

export function hintHelpAfterErrors(command: Command): void {
  const path = commandPathOf(command);
  command.showHelpAfterError(`see skyq ${path ? `${path} ` : ''}--help`);
  // "skyq: unknown option '--x'", like every other error the CLI prints.
  command.configureOutput({
    outputError: (text, write) => write(text.replace(/^error: /, 'skyq: ')),
  });
  for (const sub of command.commands) hintHelpAfterErrors(sub);
}
