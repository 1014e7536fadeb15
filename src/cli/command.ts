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
  run(ctx: AppContext, flags: Flags): Promise<Record<string, unknown>>;
}
