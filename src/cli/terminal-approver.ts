import { createInterface } from 'node:readline';
import type { ApprovalAnswer } from '../approvals/answer-approval.ts';
import type { Approver } from '../approvals/approval-broker.ts';
import type { ApprovalRecord } from '../store/records.ts';
import { describeAsk } from './approval-lines.ts';
import type { InputStream, OutputStream } from './cli-context.ts';

/** Options of {@link createTerminalApprover}. */
export interface TerminalApproverOptions {
  /** Where answers are typed: a terminal. */
  input: InputStream;
  /** Where the question is shown. */
  output: OutputStream;
  /** Pauses the live view while the question is open; returns the function that resumes it. */
  pause?: () => () => void;
  /** Called on Ctrl-C at the question, as a Ctrl-C elsewhere would be. @default nothing */
  onInterrupt?: () => void;
}

/** `y`/`yes`, `n`/`no` (or nothing), `a`/`always`: the answers the question takes. */
export function parseAnswer(text: string): ApprovalAnswer | null {
  const answer = text.trim().toLowerCase();
  if (answer === 'y' || answer === 'yes') return { decision: 'approve' };
  if (answer === '' || answer === 'n' || answer === 'no') return { decision: 'deny' };
  if (answer === 'a' || answer === 'always') return { decision: 'approve', always: true };
  return null;
}

/**
 * The inline approver of `cadre run` on a terminal: it pauses the live view and asks about one
 * call at a time (`Allow? [y]es / [N]o / [a]lways`). The question goes away when the ask is
 * answered elsewhere, times out or its run stops.
 */
export function createTerminalApprover(options: TerminalApproverOptions): Approver {
  return function terminalApprover(approval: ApprovalRecord, { signal }): Promise<ApprovalAnswer> {
    const resume = options.pause?.();
    const lines = createInterface({ input: options.input as NodeJS.ReadableStream, output: options.output as NodeJS.WritableStream, terminal: options.input.isTTY === true });
    options.output.write(`\n${describeAsk(approval, { hint: false })}\n`);
    if (approval.argument !== null && approval.argument.length > 60) options.output.write(`${approval.argument}\n`);
    return new Promise<ApprovalAnswer>((resolve, reject) => {
      let settled = false;
      const end = (finish: () => void) => {
        if (settled) return;
        settled = true;
        signal.removeEventListener('abort', onAbort);
        lines.close();
        resume?.();
        finish();
      };
      const onAbort = () => end(() => {
        options.output.write(`\n(${approval.id} no longer waits: answered elsewhere, timed out, or its run ended)\n`);
        reject(signal.reason ?? new Error('The ask ended.'));
      });
      signal.addEventListener('abort', onAbort, { once: true });
      lines.on('SIGINT', () => end(() => {
        reject(new Error('Interrupted at the question.'));
        options.onInterrupt?.();
      }));
      lines.on('close', () => end(() => reject(new Error('The terminal closed before an answer.'))));
      const ask = () => {
        lines.question('Allow? [y]es / [N]o / [a]lways for this session: ', (text) => {
          const answer = parseAnswer(text);
          if (answer) end(() => resolve(answer));
          else {
            options.output.write('Answer y, n or a.\n');
            ask();
          }
        });
      };
      ask();
    });
  };
}
