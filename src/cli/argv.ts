import { AdminCommandError, type AdminCommand, type Flags } from './command.ts';

/** Flags given alone mean `true` (`--include-key`); `--include-key=false` still says no. */
const SWITCHES = new Set(['include-key', 'accept-unauthenticated']);

/** `<words...> --flag value --flag=value --json`: the words name the command, the flags its inputs. */
export function parseAdminArgs(argv: string[]): { command: string; flags: Flags; json: boolean } {
  const words: string[] = [];
  const flags: Flags = Object.create(null);
  let json = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) {
      if (Object.keys(flags).length > 0) throw new AdminCommandError(`Unexpected "${arg}": put the command words before the flags`);
      words.push(arg);
      continue;
    }
    const [name, inline] = arg.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
    if (name === 'json') {
      json = true;
      continue;
    }
    const value = inline ?? (SWITCHES.has(name) ? 'true' : argv[++i]);
    if (value === undefined) throw new AdminCommandError(`--${name} needs a value`);
    flags[name] = value;
  }
  return { command: words.join(' '), flags, json };
}

/**
 * `backup verify FILE`: when the words name no command but all of them save the last do, and that
 * command takes an argument, the last word is the value of its argument's flag.
 */
export function withArgument(parsed: { command: string; flags: Flags; json: boolean }, commands: Record<string, AdminCommand>) {
  if (Object.hasOwn(commands, parsed.command)) return parsed;
  const cut = parsed.command.lastIndexOf(' ');
  const name = parsed.command.slice(0, cut);
  const flag = cut > 0 && Object.hasOwn(commands, name) ? commands[name]!.argument : undefined;
  if (flag === undefined || parsed.flags[flag] !== undefined) return parsed;
  parsed.flags[flag] = parsed.command.slice(cut + 1);
  return { ...parsed, command: name };
}
