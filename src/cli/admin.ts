/**
 * `npm run admin -- <command> [--flags] [--json]`: the operator's command line.
 *
 * When a server holds DATA_DIR, the command is sent to it over its admin socket, so the server
 * sees the change at once; otherwise the CLI opens the store itself. Either way one process writes.
 */
import path from 'node:path';
import { systemClock } from '../clock.ts';
import { ConfigError, loadConfig } from '../config.ts';
import { createContext } from '../createContext.ts';
import { createLogger } from '../log.ts';
import { lockHolderPid } from '../store/sqljs/sqljsStore.ts';
import { openStore } from '../store/open.ts';
import { parseAdminArgs, withArgument } from './argv.ts';
import { sendAdminRequest } from './adminSocket.ts';
import { AdminCommandError, adminCommands, runAdminCommand } from './commands.ts';

function usage(): string {
  const lines = ['Usage: npm run admin -- <command> [--flag value ...] [--json]', '', 'Commands:'];
  for (const [name, command] of Object.entries(adminCommands)) {
    const flags = Object.entries(command.flags)
      .map(([flag, spec]) => (spec.required ? `--${flag} <${flag}>` : `[--${flag} <${flag}>]`))
      .join(' ');
    lines.push(`  ${name} ${flags}`, `      ${command.description}`);
  }
  lines.push('', 'DATABASE_URL selects a PostgreSQL database; without it, DATA_DIR selects the data directory (default ./data).');
  return lines.join('\n');
}

function print(result: Record<string, unknown>, json: boolean): void {
  if (json) {
    process.stdout.write(JSON.stringify(result) + '\n');
    return;
  }
  for (const [key, value] of Object.entries(result)) process.stdout.write(`${key}: ${typeof value === 'string' ? value : JSON.stringify(value)}\n`);
}

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  if (argv.length === 0 || argv.includes('--help') || argv.includes('-h')) {
    console.log(usage());
    return argv.length === 0 ? 2 : 0;
  }
  const { command, flags, json } = withArgument(parseAdminArgs(argv), adminCommands);
  const config = loadConfig();
  const spec = Object.hasOwn(adminCommands, command) ? adminCommands[command] : undefined;
  if (!spec) throw new AdminCommandError(`Unknown command "${command}".\n\n${usage()}`);
  // File names are this command line's: the server that may run the command has another working directory.
  for (const flag of spec.paths ?? []) if (flags[flag] !== undefined) flags[flag] = path.resolve(flags[flag]!);
  if (spec.offline) {
    print(await runAdminCommand(null, command, flags), json);
    return 0;
  }

  // On PostgreSQL every instance and this command share the database: no socket, no lock to ask.
  const holder = config.database.url === null ? lockHolderPid(config.dataDir) : null;
  if (holder !== null) {
    const response = await sendAdminRequest(config.dataDir, { command, flags }, spec.timeoutMs).catch((err: NodeJS.ErrnoException) => {
      // The holder is no server taking commands: another admin command, or a server still starting.
      if (err.code !== 'ENOENT' && err.code !== 'ECONNREFUSED') throw err;
      throw new AdminCommandError(
        `${config.dataDir} is in use by process ${holder}, which takes no admin commands (another admin command, or a server still starting); retry in a moment.`,
      );
    });
    if (!response.ok) throw new AdminCommandError(response.error);
    print(response.result, json);
    return 0;
  }
  // Writes made here while the service is stopped are archived like the service's own.
  const store = await openStore({ dataDir: config.dataDir, database: config.database, secrets: config.secrets, archive: config.archive });
  try {
    const ctx = createContext({ config, store, clock: systemClock, log: createLogger(config.logLevel, process.stderr) });
    print(await runAdminCommand(ctx, command, flags), json);
  } finally {
    await store.close();
  }
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    const known = err instanceof AdminCommandError || err instanceof ConfigError;
    console.error(`error: ${known || err instanceof Error ? (err as Error).message : String(err)}`);
    process.exit(known ? 2 : 1);
  },
);
