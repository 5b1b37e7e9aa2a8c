import { styleText } from 'node:util';
import { createLogUpdate } from 'log-update';
import type { AgentColor } from '../agents/agent-color.ts';
import { formatElapsed } from '../delegation/run-views.ts';
import { messageText } from '../executors/message-codec.ts';
import { clampActivity } from '../runs/activity.ts';
import { isFinished, type RunRecord, type RunStatus } from '../store/records.ts';
import type { OutputStream } from './cli-context.ts';
import { approvalLine } from './approval-lines.ts';
import { printClosingHints } from './closing-hints.ts';
import { endDetail, messageDeliveredLine, shortRunId } from './run-lines.ts';
import { RunTracker } from './run-tracker.ts';
import type { RunView } from './run-view.ts';
import { toolFailureLines } from './tool-failure-lines.ts';

/** Options of {@link renderRunLine}. */
export interface RenderRunLineOptions {
  /** Terminal columns: the line is cut to fit. @default no limit */
  width?: number;
  /** Colour with ANSI styles. @default false */
  color?: boolean;
  /** The colour of the run's agent (its file's `color`), used for its name when colouring. @default none */
  agentColor?: AgentColor | null;
}

type Style = Parameters<typeof styleText>[0];

const spinner = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

const marks: Record<Exclude<RunStatus, 'running'>, { mark: string; style: Style }> = {
  queued: { mark: '·', style: 'gray' },
  completed: { mark: '✓', style: 'green' },
  completed_empty: { mark: '✓', style: 'yellow' },
  failed: { mark: '✗', style: 'red' },
  canceled_by_user: { mark: '■', style: 'yellow' },
  canceled_by_parent: { mark: '■', style: 'yellow' },
  abandoned: { mark: '✗', style: 'red' },
};

/**
 * One line of the live view for a run: mark, status, agent, short id (what `cadre stop` takes),
 * description, elapsed time, and its latest activity while it works, or what it came to once it
 * ended (at most 80 characters). Pure: the spinner frame and the elapsed time come from `now`.
 * @example renderRunLine(run, '2025-01-01T00:00:12.000Z') // '⠋ running   researcher  R8T0V1  Survey src/  12s  read_file src/a.ts'
 */
export function renderRunLine(run: RunRecord, now: string, options: RenderRunLineOptions = {}): string {
  const { width = Infinity, color = false, agentColor = null } = options;
  const finished = isFinished(run.status);
  const frame = spinner[Math.floor(Date.parse(now) / 100) % spinner.length];
  const { mark, style } = run.status === 'running' ? { mark: frame, style: 'cyan' as Style } : marks[run.status];
  const id = shortRunId(run.id);
  const head = `${mark} ${run.status.padEnd(9)} ${run.agent}  ${id}`;
  const elapsed = formatElapsed(run, now);
  let description = clampActivity(run.description, 48);
  let detail = finished ? endDetail(run) : clampActivity(run.activity?.kind === 'queued' ? '' : (run.last_activity ?? ''));
  const length = () => [head, description, elapsed, detail].filter((part) => part !== '').join('  ').length;
  if (length() > width) detail = detail.length - (length() - width) < 12 ? '' : clampActivity(detail, detail.length - (length() - width));
  if (length() > width) description = clampActivity(description, Math.max(12, description.length - (length() - width)));
  const paint = (styles: Style, text: string) => (color && text !== '' ? styleText(styles, text, { validateStream: false }) : text);
  const agentName = !color || agentColor === null ? paint('bold', run.agent) : paintAgent(run.agent, agentColor);
  const parts = [
    `${paint(style, `${mark} ${run.status.padEnd(9)}`)} ${agentName}`,
    paint('gray', id),
    description,
    paint('gray', elapsed),
    paint(finished ? style : 'gray', detail),
  ];
  return parts.filter((part) => part !== '').join('  ');
}

/** An agent's name in its colour: the nearest ANSI colour, or 24-bit colour for a `#rrggbb` one. */
function paintAgent(name: string, agentColor: AgentColor): string {
  if (agentColor.ansi !== null) return styleText(['bold', agentColor.ansi], name, { validateStream: false });
  const [red, green, blue] = [1, 3, 5].map((start) => Number.parseInt(agentColor.hex.slice(start, start + 2), 16));
  return styleText('bold', `\u001B[38;2;${red};${green};${blue}m${name}\u001B[39m`, { validateStream: false });
}

/** Options of {@link createLiveView}. */
export interface LiveViewOptions {
  stdout: OutputStream;
  stderr: OutputStream;
  sessionId: string;
  color: boolean;
  /** @default the system clock */
  now?: () => string;
  /** Whether asks are answered by a prompt on this terminal (it shows them itself). @default never */
  prompting?: () => boolean;
  /** How often the view is redrawn at most. @default 100 */
  frameIntervalMs?: number;
  /** The colour of an agent's runs (its file's `color`). @default none */
  agentColor?: (agent: string) => AgentColor | null;
}

/**
 * `cadre run` on a terminal: the primary agent's answer as it streams, and under it one line per
 * active run, redrawn in place; each run settles into one permanent summary line when it ends.
 */
export function createLiveView(options: LiveViewOptions): RunView {
  const { stdout, stderr, sessionId, color } = options;
  const lineOptions = (run: RunRecord) => ({ width: (stdout.columns || 80) - 1, color, agentColor: options.agentColor?.(run.agent) ?? null });
  const now = options.now ?? (() => new Date().toISOString());
  const log = createLogUpdate(stdout as NodeJS.WriteStream);
  const tracker = new RunTracker(sessionId);
  let streamed = '';
  let lastPersisted = '';
  // Whether the answer last persisted is still the last thing on screen (nothing printed under it).
  let answerIsLast = false;
  let notice = '';
  let dirty = true;
  let paused = false;
  /** The primary agent's failed tool calls already said. */
  const failures = new Set<string>();

  function draw(): void {
    if (paused) return;
    const active = tracker.list().filter((run) => !isFinished(run.status));
    if (!dirty && active.length === 0) return;
    dirty = false;
    const width = (stdout.columns || 80) - 1;
    const lines: string[] = [];
    if (streamed.trim() !== '') lines.push(streamed.trimEnd());
    if (active.length > 0 && lines.length > 0) lines.push('');
    for (const run of active) lines.push(renderRunLine(run, now(), { ...lineOptions(run), width }));
    if (notice !== '') lines.push(color ? styleText('yellow', notice, { validateStream: false }) : notice);
    if (lines.length === 0) log.clear();
    else log(lines.join('\n'));
  }

  function persist(text: string): void {
    answerIsLast = false;
    log.persist(`${text}\n`);
    dirty = true;
    draw();
  }

  function persistAnswer(text: string): void {
    if (text.trim() === '' || text.trim() === lastPersisted) return;
    lastPersisted = text.trim();
    persist(text.trimEnd());
    answerIsLast = true;
  }

  const timer = setInterval(draw, options.frameIntervalMs ?? 100);
  timer.unref();

  return {
    event(event) {
      if (event.type === 'text-delta' && event.session_id === sessionId) {
        streamed += event.text;
        dirty = true;
      } else if (event.type === 'message' && event.message.session_id === sessionId && event.message.role === 'assistant') {
        persistAnswer(messageText(event.message.content));
        streamed = '';
      } else if (event.type === 'message' && event.message.session_id === sessionId && event.message.role === 'tool') {
        // On stderr, under what is drawn: cleared first, drawn again after.
        for (const failure of toolFailureLines(event.message)) {
          if (failures.has(failure.toolCallId)) continue;
          failures.add(failure.toolCallId);
          log.clear();
          stderr.write(`${color ? styleText('red', failure.line, { validateStream: false }) : failure.line}\n`);
          answerIsLast = false;
          dirty = true;
          draw();
        }
      } else if (event.type === 'approval') {
        // The ask itself is shown by the prompt while one is open; its answer is kept on screen.
        if (event.approval.status !== 'pending' || !options.prompting?.()) persist(approvalLine(event.approval));
      } else if (event.type === 'run-event') {
        const change = tracker.apply(event);
        if (!change) return;
        // The step that starts runs ends (and is stored) only after them: show its text first.
        if (change.type === 'run-queued' && streamed.trim() !== '') {
          persistAnswer(streamed);
          streamed = '';
        }
        if (change.type === 'run-end') persist(renderRunLine(change.run, now(), lineOptions(change.run)));
        if (change.type === 'message-deliver') {
          const line = messageDeliveredLine(change.run, (event.event.data as { message_id?: unknown }).message_id);
          if (line) persist(line);
        }
        dirty = true;
      }
    },
    pause() {
      paused = true;
      log.clear();
      return () => {
        paused = false;
        dirty = true;
        draw();
      };
    },
    notice(text) {
      notice = text;
      dirty = true;
      draw();
    },
    finish(outcome) {
      clearInterval(timer);
      log.clear();
      log.done();
      // The final answer closes the output, even when it streamed earlier and run lines came under it.
      if (outcome.text.trim() !== '' && !(answerIsLast && outcome.text.trim() === lastPersisted)) stdout.write(`${outcome.text.trimEnd()}\n`);
      printClosingHints(stderr, outcome);
    },
  };
}
