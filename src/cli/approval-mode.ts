import type { ApprovalMode } from '../approvals/approval-broker.ts';
import { ConfigError } from '../errors/config-error.ts';
import type { CliContext } from './cli-context.ts';

/** The flags of `cadre run` that say what happens to asks for approval. */
export interface ApprovalFlags {
  /** `--yes`: approve every ask. */
  yes?: boolean;
  /** `--approvals ask|wait|deny`. */
  approvals?: string;
  json?: boolean;
}

/** The values `--approvals` takes; help and shell completion offer them. */
export const approvalsFlagChoices: readonly string[] = ['ask', 'wait', 'deny'];

/**
 * What `cadre run` does with an ask: `--yes` approves, `--approvals` says, and otherwise a
 * terminal (stdin and stdout, without `--json`) prompts and anything else denies at once.
 * @throws {ConfigError} for an unknown mode, or `--yes` with `--approvals`.
 */
export function approvalModeOf(context: CliContext, flags: ApprovalFlags): ApprovalMode {
  if (flags.approvals !== undefined && !approvalsFlagChoices.includes(flags.approvals)) {
    throw new ConfigError(`--approvals must be ask, wait or deny, not '${flags.approvals}'.`);
  }
  if (flags.yes && flags.approvals !== undefined) throw new ConfigError('--yes approves every ask; leave out --approvals, or leave out --yes.');
  if (flags.yes) return 'yes';
  const mode = flags.approvals as ApprovalMode | undefined;
  const terminal = context.stdin.isTTY === true && context.stdout.isTTY === true && !flags.json;
  if (mode === 'ask' && !terminal)
    throw new ConfigError('--approvals ask needs a terminal to ask on (and no --json); use --approvals wait to answer with cadre approve, or --yes.');
  return mode ?? (terminal ? 'ask' : 'deny');
}
