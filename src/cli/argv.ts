import { AdminCommandError, type Flags } from './command.ts';

/** Flags given alone mean `true` (`--include-key`); `--include-key=false` still says no. */
const SWITCHES = new Set(['include-key']);

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
