import type { HarnessName } from '../agents/agent-definition.ts';

export type { HarnessName } from '../agents/agent-definition.ts';

/** What a dialect needs to start its program for one run. */
export interface HarnessStart {
  /** The first message (the run's task, with its context), or the message a resumed session goes on with. */
  prompt: string;
  /** The agent's body: the program's extra system prompt where it takes one. */
  system: string;
  /** The agent's `model:` as written, where set. */
  model?: string;
  /** The run's turn cap, for a program that has one. */
  maxTurns: number;
  /** The program's own session to resume, from an earlier invocation. */
  sessionId?: string;
  /** A folder of the run's own for configuration files the program reads (Codex's output schema). */
  scratch: string;
  /** The JSON Schema the result must match, for a program that takes one. */
  outputSchema?: Record<string, unknown>;
  /** Whether cadre's rules let the program write in its workspace and run commands without asking. */
  allowed: HarnessAllowance;
  /**
   * For a program that asks mid-run: cadre's tools (by cadre's names) its rules deny outright (the
   * program is not given them) or may ask about (each use must come to cadre, even one the program
   * would make without asking). A tool not named is one cadre's rules allow outright.
   */
  tools?: HarnessToolRules;
}

/** cadre's decision on each of its tools a program's tools map to, where it is not `allow` (see {@link HarnessStart.tools}). */
export type HarnessToolRules = Readonly<Record<string, 'ask' | 'deny'>>;

/** What cadre's rules let a program that cannot ask mid-run do (it is asked once before, where a rule asks). */
export interface HarnessAllowance {
  write: boolean;
  exec: boolean;
  network: boolean;
}

/** How to start a program: its arguments, more environment, and lines for its stdin. */
export interface HarnessInvocation {
  args: string[];
  env?: Record<string, string>;
  /** Lines written to stdin at start; stdin stays open only for a program that takes input while it works. */
  input?: string[];
  /** Whether stdin stays open while the program works (messages, answers to its asks). */
  interactive: boolean;
}

/** One thing a program reported, in cadre's terms. */
export type HarnessEvent =
  | { type: 'session'; id: string }
  | { type: 'text'; text: string }
  | { type: 'tool-call'; id: string; name: string; input: unknown }
  | { type: 'tool-result'; id: string; output: string; ok: boolean }
  /** Totals for the invocation, where the program reports them at its end. */
  | { type: 'usage'; input_tokens: number; output_tokens: number; cache_read_tokens?: number; cache_write_tokens?: number; cost_usd?: number }
  /** The invocation's end: its final text, or its error; `maxTurns` when it ran out of turns. */
  | { type: 'result'; text: string; error?: string; maxTurns?: boolean }
  /** The program asks to use a tool; answer with {@link HarnessDialect.answer}. */
  | { type: 'ask'; id: string; tool: string; input: Record<string, unknown> };

/**
 * One agent program: how to start it, how to read its machine-readable output. The engine that
 * runs it under cadre's lifecycle is one for all ({@link createHarnessExecutor}).
 */
export interface HarnessDialect {
  readonly name: HarnessName;
  /** The program's file name on the PATH. */
  readonly program: string;
  /** How a person installs it. */
  readonly install: string;
  /** Whether it asks cadre before each tool use (else it gets its sandbox from cadre's rules before it starts). */
  readonly asksMidRun: boolean;
  /** The tools, by cadre's names ({@link toolName}), that the program is started with cadre's rules on ({@link HarnessStart.tools}). */
  readonly ruledTools?: readonly string[];
  invocation(start: HarnessStart): HarnessInvocation | Promise<HarnessInvocation>;
  /** A reader of one invocation's output: the events of each JSON line (an object); none for a line it has no use for. */
  createParser(): (line: Record<string, unknown>) => HarnessEvent[];
  /** The stdin line answering an ask. */
  answer?(ask: Extract<HarnessEvent, { type: 'ask' }>, decision: { allow: boolean; message?: string }): string;
  /** The stdin line giving a message to the program while it works. */
  message?(text: string): string;
  /** Maps the program's tool names to cadre's (for approvals and the activity line). */
  toolName(name: string): string;
}
