export { bubblewrapArguments, bubblewrapBaseArguments } from './bubblewrap-arguments.ts';
export { createSandbox, type CommandLaunch, type Sandbox, type SandboxOptions, type SandboxStatus } from './create-sandbox.ts';
export { detectSandbox, detectSandboxOnce, type DetectSandboxOptions, type SandboxAvailability, type SandboxKind } from './detect-sandbox.ts';
export type { SandboxPolicy } from './sandbox-policy.ts';
export { SandboxUnavailableError } from './sandbox-unavailable-error.ts';
export { seatbeltProfile } from './seatbelt-profile.ts';
