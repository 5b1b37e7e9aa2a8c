import { createInterface } from 'node:readline';
import type { ApprovalAnswer } from '../approvals/answer-approval.ts';
import type { Approver } from '../approvals/approval-broker.ts';
import type { ApprovalRecord } from '../store/records.ts';
import { describeAsk, describePreview } from './approval-lines.ts';
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

/** The answer one key gives at the question: `y`, `n` (or Enter), `a`; null for any other key. */
export function keyAnswer(key: string): ApprovalAnswer | null {
  const lower = key.toLowerCase();
  if (lower === 'y') return { decision: 'approve' };
  if (lower === 'n' || key === '\r' || key === '\n') return { decision: 'deny' };
  if (lower === 'a') return { decision: 'approve', always: true };
  return null;
}

/** A terminal whose keys can be read one at a time. */
type RawTerminal = NodeJS.ReadStream & { setRawMode(mode: boolean): unknown };

function rawTerminal(input: InputStream): RawTerminal | undefined {
  const candidate = input as Partial<RawTerminal>;
  return input.isTTY === true && typeof candidate.setRawMode === 'function' ? (candidate as RawTerminal) : undefined;
}

const question = 'Allow? [y]es / [N]o / [a]lways for this session: ';

/**
 * The question on a real terminal: one key answers, without Enter (`y`, `n` or Enter, `a`), and
 * the answer is echoed as a word. Ctrl-C interrupts as it would elsewhere; other keys (arrows,
 * letters) ask again.
 */
function askByKey(
  terminal: RawTerminal,
  options: TerminalApproverOptions,
  approval: ApprovalRecord,
  signal: AbortSignal,
  resume: (() => void) | undefined,
): Promise<ApprovalAnswer> {
  const wasRaw = terminal.isRaw;
  terminal.setRawMode(true);
  terminal.resume();
  options.output.write(question);
  return new Promise<ApprovalAnswer>((resolve, reject) => {
    let settled = false;
    const end = (finish: () => void) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      terminal.off('data', onData);
      terminal.off('end', onEnd);
      terminal.setRawMode(wasRaw);
      terminal.pause();
      resume?.();
      finish();
    };
    const onData = (chunk: string | Buffer) => {
      const text = String(chunk);
      // An escape sequence (an arrow key) holds letters that are no answer.
      if (text.startsWith('\u001b')) return;
      for (const key of text) {
        if (key === '\u0003') {
          options.output.write('^C\n');
          return end(() => {
            reject(new Error('Interrupted at the question.'));
            options.onInterrupt?.();
          });
        }
        if (key === '\u0004') return end(() => reject(new Error('The terminal closed before an answer.')));
        const answer = keyAnswer(key);
        if (answer) {
          options.output.write(`${answer.decision === 'deny' ? 'no' : answer.always ? 'always' : 'yes'}\n`);
          return end(() => resolve(answer));
        }
      }
      options.output.write(`\nAnswer y, n or a. ${question}`);
    };
    const onEnd = () => end(() => reject(new Error('The terminal closed before an answer.')));
    const onAbort = () =>
      end(() => {
        options.output.write(`\n(${approval.id} no longer waits: answered elsewhere, timed out, or its run ended)\n`);
        reject(signal.reason ?? new Error('The ask ended.'));
      });
    signal.addEventListener('abort', onAbort, { once: true });
    terminal.on('data', onData);
    terminal.on('end', onEnd);
  });
}

/**
 * The inline approver of `cadre run` on a terminal: it pauses the live view and asks about one
 * call at a time (`Allow? [y]es / [N]o / [a]lways`), answered by one key on a terminal, by a line
 * elsewhere (a pipe). The question goes away when the ask is answered elsewhere, times out or its
 * run stops.
 */
export function createTerminalApprover(options: TerminalApproverOptions): Approver {
  return function terminalApprover(approval: ApprovalRecord, { signal }): Promise<ApprovalAnswer> {
    const resume = options.pause?.();
    const preview = describePreview(approval);
    options.output.write(`\n${describeAsk(approval, { hint: false })}\n${preview === '' ? '' : `${preview}\n`}`);
    const terminal = rawTerminal(options.input);
    if (terminal !== undefined) return askByKey(terminal, options, approval, signal, resume);
    const lines = createInterface({
      input: options.input as NodeJS.ReadableStream,
      output: options.output as NodeJS.WritableStream,
      terminal: options.input.isTTY === true,
    });
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
      const onAbort = () =>
        end(() => {
          options.output.write(`\n(${approval.id} no longer waits: answered elsewhere, timed out, or its run ended)\n`);
          reject(signal.reason ?? new Error('The ask ended.'));
        });
      signal.addEventListener('abort', onAbort, { once: true });
      lines.on('SIGINT', () =>
        end(() => {
          reject(new Error('Interrupted at the question.'));
          options.onInterrupt?.();
        }),
      );
      lines.on('close', () => end(() => reject(new Error('The terminal closed before an answer.'))));
      const ask = () => {
        lines.question(question, (text) => {
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
