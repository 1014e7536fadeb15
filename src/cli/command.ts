/**
 * What an operator's command is: its flags, its description and what it runs against the context.
 * Shared by the command tables (commands.ts, bankPartnerCommands.ts) and the argument parser.
 */
import type { AppContext } from '../context.ts';

/** A refusal for the operator: printed as `error: <message>`, exit code 2. */
export class AdminCommandError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AdminCommandError';
  }
}

export type Flags = Record<string, string | undefined>;

export interface AdminCommand {
  /** Flags it takes; those marked required must be present. */
  flags: Record<string, { required?: boolean; description: string }>;
  description: string;
  /** Flags that name files: the command line makes them absolute (against its own directory) before the server sees them. */
  paths?: readonly string[];
  /** How long the command line waits for a running server to answer it (default 10 s). */
  timeoutMs?: number;
  /** A flag that may also be given as a last word after the command's (`backup verify FILE`). */
  argument?: string;
  /** Runs in the command line itself, with no store and no server (restore writes a new data directory). */
  offline?: boolean;
  run(ctx: AppContext, flags: Flags): Promise<Record<string, unknown>>;
}
