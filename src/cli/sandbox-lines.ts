import type { CadreConfig } from '../config/load-config.ts';
import type { SandboxStatus } from '../tools/sandbox/create-sandbox.ts';
import type { CliContext } from './cli-context.ts';
import type { RuntimeFlags } from './command-options.ts';
import { cliSandbox } from './open-runtime.ts';

/** One line saying how `bash` is confined, for `cadre agents`. */
export function describeSandbox(status: SandboxStatus): string {
  if (!status.confined) {
    const why = status.mode === 'off' ? 'sandbox.mode is off' : status.reason;
    const consequence = status.mode === 'required' ? 'bash is refused' : 'bash commands run unconfined, as you';
    return `sandbox: none (${why}): ${consequence}`;
  }
  return `sandbox: ${status.kind} (mode ${status.mode}): bash writes only in ${status.writable.join(', ')}; network ${status.network ? 'on' : 'off'}`;
}

/**
 * The warning `cadre run` and `cadre serve` print once at start when `bash` runs unconfined
 * although the configuration did not turn the sandbox off; undefined otherwise.
 */
export function sandboxWarning(status: SandboxStatus): string | undefined {
  if (status.confined || status.mode === 'off') return undefined;
  if (status.mode === 'required') return `no OS sandbox here (${status.reason}): bash is refused, as sandbox.mode 'required' says`;
  return `no OS sandbox here (${status.reason}): bash commands run unconfined; set "sandbox": {"mode": "required"} in cadre.config.json to refuse them, or "off" to silence this`;
}

/** The status of the sandbox the configuration sets up for `context.cwd`, probed without opening the store. */
export async function configuredSandboxStatus(context: CliContext, flags: RuntimeFlags, config: CadreConfig): Promise<SandboxStatus> {
  const { createSandbox } = await import('../tools/sandbox/create-sandbox.ts');
  return cliSandbox(createSandbox, context, flags, config).status();
}
