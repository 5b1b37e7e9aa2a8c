import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { z } from 'zod';
import { CappedOutput } from './capped-output.ts';
import { defineTool, ToolInputError } from './define-tool.ts';
import { commandPreview } from './approval-previews.ts';
import { killProcessGroup, trackProcessGroup } from './process-groups.ts';
import type { CommandLaunch, Sandbox } from './sandbox/create-sandbox.ts';
import { toolDescription } from './tool-description.ts';

/** Options of {@link createBashTool}. */
export interface BashToolOptions {
  /** Where commands start. */
  root: string;
  /** The shell that runs `-c command`. @default '/bin/bash', or '/bin/sh' where there is no bash */
  shell?: string;
  /** @default 120 */
  defaultTimeoutSeconds?: number;
  /** The largest `timeout_seconds` accepted. @default 1800 */
  maxTimeoutSeconds?: number;
  /** Characters kept from the start and, again, from the end of the output. @default 15000 */
  halfOutputChars?: number;
  /** Between SIGTERM and SIGKILL when a command is ended. @default 500 */
  killGraceMs?: number;
  /** The environment of commands. @default process.env (as in the user's own shell) */
  env?: NodeJS.ProcessEnv;
  /**
   * The OS sandbox commands run in (see `createSandbox`): it decides where they may write and
   * whether they reach the network. @default none: commands run as the user, unconfined
   */
  sandbox?: Sandbox;
}

/** How a command ended. */
type Ending = { kind: 'exit'; code: number | null; signal: NodeJS.Signals | null } | { kind: 'timeout' } | { kind: 'error'; error: Error };

function defaultShell(): string {
  return existsSync('/bin/bash') ? '/bin/bash' : '/bin/sh';
}

/**
 * `bash {command, timeout_seconds?}`: runs a command with a shell in the workspace root. The
 * shell leads a process group of its own (`detached`), and the whole group is killed (SIGTERM,
 * then SIGKILL) on timeout, on a stop (the tool's abort signal), when the shell exits (no
 * process outlives its call), and when cadre exits. Output is stdout and stderr interleaved,
 * capped head and tail. Without a `sandbox` a shell can reach outside the workspace: that is what
 * the `exec` risk and its approvals are for; in one, the box's whole process tree goes with the
 * group (its first process is the init of its pid namespace).
 */
export function createBashTool(options: BashToolOptions) {
  const {
    root,
    shell = defaultShell(),
    defaultTimeoutSeconds = 120,
    maxTimeoutSeconds = 1800,
    halfOutputChars = 15_000,
    killGraceMs = 500,
    env,
    sandbox,
  } = options;
  const inputSchema = z.object({
    command: z
      .string({ error: 'required: the command line to run' })
      .refine((command) => command.trim() !== '', 'must not be empty')
      .refine((command) => !command.includes('\0'), 'must not contain NUL characters'),
    timeout_seconds: z
      .number('must be a number of seconds')
      .positive('must be more than 0')
      .max(maxTimeoutSeconds, `must be at most ${maxTimeoutSeconds}`)
      .optional(),
  });
  return defineTool({
    name: 'bash',
    description:
      toolDescription('bash.txt', { shell, defaultTimeoutSeconds, maxTimeoutSeconds, halfOutputChars }) +
      (sandbox === undefined || sandbox.mode === 'off' ? '' : `\n\n${toolDescription('bash-sandbox.txt')}`),
    inputSchema,
    risk: 'exec',
    argument: (input) => input.command,
    preview: (input) => commandPreview(input.command),
    // Under `sandbox.mode: required` without a sandbox, refused before anyone is asked to approve it.
    check: async () => sandbox?.check(),
    execute: async ({ command, timeout_seconds: timeoutSeconds = defaultTimeoutSeconds }, { abortSignal }) => {
      const direct: CommandLaunch = { file: shell, args: ['-c', command], env: env ?? process.env };
      const launch = sandbox === undefined ? direct : await sandbox.launch(direct);
      return new Promise<string>((resolve, reject) => {
        if (abortSignal?.aborted) return reject(abortSignal.reason);
        const output = new CappedOutput({ headChars: halfOutputChars, tailChars: halfOutputChars });
        const child = spawn(launch.file, launch.args, { cwd: root, env: launch.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
        const untrack = child.pid === undefined ? () => {} : trackProcessGroup(child.pid);
        for (const stream of [child.stdout, child.stderr]) {
          const decoder = new StringDecoder('utf8');
          stream.on('data', (chunk: Buffer) => output.append(decoder.write(chunk)));
          stream.on('end', () => output.append(decoder.end()));
        }
        let ending: Ending | undefined;
        let settled = false;

        /** Ends the whole group: SIGTERM, and SIGKILL after the grace for whatever is left. */
        const endGroup = () => {
          if (child.pid === undefined) return;
          const pid = child.pid;
          killProcessGroup(pid, 'SIGTERM');
          setTimeout(() => killProcessGroup(pid, 'SIGKILL'), killGraceMs).unref();
        };

        const settle = (finish: () => void) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          abortSignal?.removeEventListener('abort', onAbort);
          // The group got SIGKILL by then; until then cadre's exit still kills it.
          setTimeout(untrack, killGraceMs + 50).unref();
          finish();
        };

        const report = () =>
          settle(() => {
            if (ending?.kind === 'error') {
              reject(new ToolInputError(`Cannot run the command with ${shell}: ${ending.error.message}`));
              return;
            }
            const text = output.total === 0 ? '(no output)' : output.toString().replace(/\n$/, '');
            let status: string;
            if (ending?.kind === 'timeout') status = `timed out after ${timeoutSeconds} s: the command and the processes it started were killed`;
            else if (ending?.kind === 'exit' && ending.signal) status = `killed by signal ${ending.signal}`;
            else status = `exit code: ${ending?.kind === 'exit' ? ending.code : 'unknown'}`;
            resolve(`${text}\n[${status}]`);
          });

        const onAbort = () => {
          endGroup();
          settle(() => reject(abortSignal!.reason));
        };
        abortSignal?.addEventListener('abort', onAbort, { once: true });

        const timer = setTimeout(() => {
          ending = { kind: 'timeout' };
          endGroup();
          // Whatever still holds the pipes after SIGKILL cannot stop the answer.
          setTimeout(report, killGraceMs + 100);
        }, timeoutSeconds * 1000);

        child.on('error', (error) => {
          ending ??= { kind: 'error', error };
          report();
        });
        child.on('exit', (code, signal) => {
          ending ??= { kind: 'exit', code, signal };
          // The shell is done: background processes it left go too, and the answer waits only
          // for the output already in the pipes.
          endGroup();
          setTimeout(report, killGraceMs + 100);
        });
        child.on('close', report);
      });
    },
  });
}
