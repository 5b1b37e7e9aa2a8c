import type { TelemetryOptions, ToolSet } from 'ai';
import type { AgentDefinition } from '../agents/agent-definition.ts';
import type { AgentRegistry } from '../agents/agent-registry.ts';
import type { ApprovalMode, Approver } from '../approvals/approval-broker.ts';
import type { Limits } from '../config/limits.ts';
import type { Coordination } from '../coordination/coordination.ts';
import type { SummarizeSettings } from '../delegation/summarize-result.ts';
import type { QueueOptions } from '../executors/queue-executor.ts';
import type { HarnessCommands } from '../harnesses/find-harness-program.ts';
import type { Logger } from '../logging/logger.ts';
import type { McpOptions } from '../mcp/client/agent-tools.ts';
import type { McpServerError } from '../mcp/client/mcp-server-error.ts';
import type { LanguageModelInstance } from '../models/resolve-model.ts';
import type { PermissionsConfig } from '../permissions/permissions.ts';
import type { Store } from '../store/store.ts';
import type { TelemetrySettings } from '../telemetry/telemetry-settings.ts';
import type { NewId, Now, NowMs } from '../util/clock.ts';
import type { WorktreeSettings } from '../worktrees/run-worktrees.ts';

/** How a runtime rides out failures: model retries, leases that outlive a crash, what never shows. */
export interface CadreReliabilityOptions {
  /** Lease length for crash survival. @default 15000 */
  leaseMs?: number;
  /** Retries of a failed model call; `limits.maxRetries` wins when both are given. @default 2 */
  maxRetries?: number;
  /** The first retry's delay when the provider announces none; it doubles for each further retry. @default 2000 */
  retryDelayMs?: number;
  /**
   * Values to redact besides the environment's keys (`*_API_KEY`, `*_TOKEN`, `*_SECRET`): API
   * keys and header values your code gave a model object. Redacted wherever provider text enters
   * cadre, in tool results and in logs.
   */
  secrets?: Iterable<string>;
}

/** Options of {@link createCadre}. */
export interface CadreOptions extends CadreReliabilityOptions, McpOptions, QueueOptions {
  store: Store;
  /** The session's default model: a spec like `anthropic:claude-sonnet-4-5`, or an AI SDK model instance. */
  model: string | LanguageModelInstance;
  /** Agents: a loaded registry, or definitions added to the built-ins. @default the built-ins */
  agents?: AgentRegistry | AgentDefinition[];
  /** @default the defaults in docs/runs-and-limits.md */
  limits?: Partial<Limits>;
  /**
   * The tools of this runtime: agents without a `tools` list (the built-ins too) get all of them,
   * others those their list names; approvals decide what runs.
   * @default the read tools (`read_file`, `list_files`, `grep`) on the working directory
   */
  tools?: ToolSet;
  /**
   * Short model names agents may use (`model: sonnet`), resolved when a model is made; opencode's
   * `provider/model-id` is read as `provider:model-id` unless named here.
   * @default sonnet, opus and haiku (see `defaultModelAliases`)
   */
  modelAliases?: Record<string, string>;
  /**
   * Permission rules for tool calls (docs/tools-and-approvals.md): lists of rules that allow, ask or deny.
   * Calls no rule matches get the defaults: read allow; write, exec and network ask.
   * @example { allow: ['bash(npm test*)'], deny: ['network'] }
   */
  permissions?: PermissionsConfig;
  /**
   * What happens to a call that asks: `ask` the {@link CadreOptions.approver} (answers from
   * elsewhere count too), `wait` for an answer from elsewhere ({@link Cadre.approve}, `cadre
   * approve`, the dashboard), `deny` at once, or `yes` to approve at once. `ask` and `wait` deny
   * after `limits.approvalTimeoutMs`.
   * @default 'ask' with an approver, else 'deny'
   */
  approvals?: ApprovalMode;
  /** Asks a person about one call at a time (a terminal prompt, a chat message); see {@link Approver}. */
  approver?: Approver;
  /** Base URL for `openai-compatible:` specs. */
  baseURL?: string | undefined;
  /** Environment for API keys. @default process.env */
  env?: Record<string, string | undefined>;
  /** @default the system clock */
  now?: Now;
  /** The clock in epoch milliseconds (throttles, waits, lease arithmetic). @default the system clock */
  nowMs?: NowMs;
  /** @default time-sortable ids */
  newId?: NewId;
  /**
   * The AI SDK's telemetry settings for every agent loop. By default telemetry stays on while
   * anyone could receive it (an integration registered with the SDK's `registerTelemetry`, or a
   * subscriber to its `ai:telemetry` tracing channel, as OpenTelemetry instrumentation does) and
   * is turned off otherwise, since building its events costs 30–40 % of a plain model call with
   * an in-memory model.
   */
  telemetry?: TelemetryOptions;
  /**
   * Whether model text is streamed. `auto` streams while someone watches (a {@link Cadre.subscribe}
   * listener: the terminal view, the dashboard) and otherwise calls the model without streaming,
   * which costs far less CPU per step; activity lines then follow steps instead of sentences.
   * @default 'auto'
   */
  streaming?: 'auto' | 'always' | 'never';
  /** How long an idle session waits after a notification before it resumes, gathering others that come together. @default 250 */
  autoResumeDelayMs?: number;
  /** Primary-agent turns of all sessions running at once in this process; more wait. @default 64 */
  maxConcurrentTurns?: number;
  /**
   * Signals between the processes sharing the store (stops, answers to asks, ends of runs,
   * pending notifications, live events). Postgres and Redis engines come with `cadre/postgres`
   * and `cadre/bullmq`. @default polling the store
   */
  coordination?: Coordination;
  /**
   * Summaries instead of cuts (docs/runs-and-limits.md): with `enabled`, a result longer than
   * `limits.maxResultChars` reaches the parent as a model-made summary of at most `maxChars`
   * (default 4000), by `model` (default the parent's model, or the run's own when the parent is
   * driven by a host outside cadre); on failure or after `timeoutMs` (default 60000) the head/tail
   * cut is used. The run keeps the full text. @default no summaries
   */
  summarize?: SummarizeSettings;
  /** Where internal errors go. @default `logger.error`, with the error's cause chain */
  onError?: (error: unknown) => void;
  /**
   * Told once per server that an MCP server an agent needs failed to start or went away (the
   * model is told too, with its prompt). @default `logger.warn`
   */
  onMcpServerFailure?: (failure: McpServerError) => void;
  /**
   * Where cadre's structured logs go: a pino logger, or anything with its methods
   * (`createLogger` makes one). @default warnings and errors to stderr, JSON lines off a terminal
   */
  logger?: Logger;
  /**
   * Where the programs of `harness:` agents are, where not on the PATH (docs/harnesses.md).
   * @default each found on the PATH of `env`
   * @example { 'claude-code': { command: '/opt/claude/bin/claude' } }
   */
  harnesses?: HarnessCommands;
  /**
   * OpenTelemetry traces over OTLP (the configuration's `telemetry` key): a span per primary turn
   * and run (`cadre.run.id`, `cadre.session.id`, `cadre.agent`, `cadre.parent_run.id`), with the AI
   * SDK's model-call and tool-call spans under them. The OpenTelemetry packages load only when it
   * is on. @default on when `OTEL_EXPORTER_OTLP_ENDPOINT` is set in `env`, contents left out
   * @example { endpoint: 'http://localhost:4318', protocol: 'http/json' }
   */
  tracing?: TelemetrySettings;
  /**
   * Runs' own git worktrees (`isolation: worktree`, docs/worktrees.md), made in the workspace's
   * repository (`workspace`) on a branch from `baseRef`. @default { baseRef: 'HEAD' }
   */
  worktree?: WorktreeSettings;
}
