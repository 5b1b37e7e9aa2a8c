import { isFinished, type MessageRecord, type RunRecord } from '../records.ts';

/**
 * A subagent's final answer stored once. A finished run's `result.text` is the one stored copy;
 * a message whose content repeats it exactly (the parent's tool result, a notification, the
 * child's last assistant message) is stored with a reference in its place, and every read of the
 * message puts the text back, so readers get the content exactly as it was given.
 *
 * Stored form: a message's content is JSON of a string or an array of parts, never of an object,
 * so a content that refers to results is stored as the object
 * `{"cadre_result_of": [run ids], "content": <content>}`, where each place that held run `i`'s
 * text holds `\u0001i\u0001` instead. Only whole texts that are exact substrings are replaced, and
 * only in strings without a `\u0001` of their own (so every `\u0001` read back is a reference).
 * Rows stored without references (by older builds, or with texts that were cut or summarized for
 * the parent) read as they always did.
 *
 * A reference is only ever written in the same commit as the result it names or a later one
 * (commits keep the order of writes), and a finished run's result never changes.
 */

/** The result text of a finished run, as written, that later messages may refer to. */
export interface StoredAnswer {
  runId: string;
  text: string;
}

/** The key of the stored object form of a content that refers to results. */
const refsKey = 'cadre_result_of';

/**
 * The start of every stored content that refers to results: SQL finds the run ids in it without
 * parsing the JSON (ids of {@link plainId} only, so they need no escaping).
 */
export const refsPrefix = `{"${refsKey}":[`;

/** The run ids a reference may name: cadre's own (`run_...`) and any made of the same characters. */
const plainId = /^[A-Za-z0-9_.:-]+$/;

/** Texts shorter than this are stored as they are: a reference would save next to nothing. */
export const minReferencedChars = 64;

/** The references a stored content holds, as read back (`JSON.parse` of the column). */
export interface ParsedContent {
  content: unknown;
  /** The runs whose result texts the content refers to, by index; null when it holds none. */
  refs: string[] | null;
}

/** A stored content refers to the result of a run that has none (a database changed by hand). */
export class MissingResultError extends Error {
  readonly runId: string;

  constructor(runId: string, where: string) {
    super(`${where} refers to the result of run '${runId}', which has no result stored.`);
    this.name = 'MissingResultError';
    this.runId = runId;
  }
}

/** The column as stored, parsed: the content, and the runs it refers to. */
export function parseStoredContent(stored: string): ParsedContent {
  const value = JSON.parse(stored) as unknown;
  // A plain content is a string, an array or null: only the stored form is an object.
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { content: value, refs: null };
  const refs = (value as Record<string, unknown>)[refsKey];
  if (!Array.isArray(refs)) return { content: value, refs: null };
  return { content: (value as Record<string, unknown>).content, refs: refs as string[] };
}

/** Whether a stored column may hold references, without parsing it. */
export function mayHoldRefs(stored: string): boolean {
  return stored.startsWith(refsPrefix);
}

/**
 * The content with each reference replaced by its run's result text (`texts` by run id).
 * @throws {MissingResultError} when a run it refers to has no text in `texts`.
 */
export function expandContent(parsed: ParsedContent, texts: ReadonlyMap<string, string | null | undefined>, where: string): unknown {
  const { refs } = parsed;
  if (refs === null) return parsed.content;
  const byIndex = refs.map((runId) => {
    const text = texts.get(runId);
    if (typeof text !== 'string') throw new MissingResultError(runId, where);
    return text;
  });
  return mapLeaves(
    parsed.content,
    (leaf) => (leaf.includes('\u0001') ? expandLeaf(leaf, byIndex, where) : leaf),
    () => true,
  );
}

/** A `messages` row as both engines read it: `content` is the column's JSON. */
export interface MessageRow {
  session_id: string;
  seq: number;
  role: string;
  content: string;
  created_at: string;
}

/**
 * Message rows as records, each content read back with its references expanded. `textsOf` gives
 * the result texts of the runs referred to; it is called once, and only when a row refers to any.
 */
export function messagesFromRows(
  rows: readonly MessageRow[],
  textsOf: (runIds: ReadonlySet<string>) => ReadonlyMap<string, string | null | undefined>,
): MessageRecord[] {
  const records: MessageRecord[] = new Array(rows.length);
  let referring: Array<{ record: MessageRecord; parsed: ParsedContent }> | null = null;
  for (let index = 0; index < rows.length; index++) {
    const row = rows[index];
    const parsed = parseStoredContent(row.content);
    const record: MessageRecord = {
      session_id: row.session_id,
      seq: row.seq,
      role: row.role as MessageRecord['role'],
      content: parsed.content,
      created_at: row.created_at,
    };
    records[index] = record;
    if (parsed.refs !== null) (referring ??= []).push({ record, parsed });
  }
  if (referring === null) return records;
  const texts = textsOf(new Set(referring.flatMap(({ parsed }) => parsed.refs!)));
  for (const { record, parsed } of referring) record.content = expandContent(parsed, texts, `Message ${record.seq} of session '${record.session_id}'`);
  return records;
}

function expandLeaf(leaf: string, texts: readonly string[], where: string): string {
  const pieces = leaf.split('\u0001');
  if (pieces.length % 2 === 0) throw new TypeError(`${where} holds a broken reference to a result.`);
  let text = pieces[0];
  for (let index = 1; index < pieces.length; index += 2) {
    const ref = texts[Number(pieces[index])];
    if (ref === undefined || !/^\d+$/.test(pieces[index])) throw new TypeError(`${where} holds a broken reference to a result.`);
    text += ref + pieces[index + 1];
  }
  return text;
}

/**
 * The strings of a content where an answer may be repeated, each replaced by `replace` (copies
 * only where something changed; the content given is never changed): a string content, a text
 * part's `text`, and a tool result's text output (`output.value`). `wanted` says which parts to
 * look into.
 */
function mapLeaves(
  content: unknown,
  replace: (leaf: string, part: Record<string, unknown> | null) => string,
  wanted: (part: Record<string, unknown>) => boolean,
): unknown {
  if (typeof content === 'string') return replace(content, null);
  if (!Array.isArray(content)) return content;
  let copy: unknown[] | null = null;
  for (let index = 0; index < content.length; index++) {
    const part = content[index] as Record<string, unknown> | null;
    if (part === null || typeof part !== 'object' || !wanted(part)) continue;
    let changed: Record<string, unknown> | null = null;
    if (part.type === 'text' && typeof part.text === 'string') {
      const text = replace(part.text, part);
      if (text !== part.text) changed = { ...part, text };
    } else if (part.type === 'tool-result') {
      const output = part.output as Record<string, unknown> | null | undefined;
      if (output && typeof output === 'object' && output.type === 'text' && typeof output.value === 'string') {
        const value = replace(output.value, part);
        if (value !== output.value) changed = { ...part, output: { ...output, value } };
      }
    }
    if (changed !== null) {
      copy ??= [...content];
      copy[index] = changed;
    }
  }
  return copy ?? content;
}

/**
 * The content with every whole occurrence of the answers' texts replaced by references (added to
 * `refs`); the content itself when none occurs.
 */
function referTo(
  content: unknown,
  answersFor: (part: Record<string, unknown> | null) => readonly StoredAnswer[] | undefined,
  refs: string[],
  wanted: (part: Record<string, unknown>) => boolean,
): unknown {
  return mapLeaves(
    content,
    (leaf, part) => {
      if (leaf.length < minReferencedChars) return leaf;
      const answers = answersFor(part);
      if (answers === undefined || answers.length === 0) return leaf;
      let text = leaf;
      for (const answer of answers) {
        if (answer.text.length > text.length || !text.includes(answer.text)) continue;
        let index = refs.indexOf(answer.runId);
        if (index === -1) index = refs.push(answer.runId) - 1;
        text = text.split(answer.text).join(`\u0001${index}\u0001`);
      }
      return text;
    },
    wanted,
  );
}

/** Whether a string a reference could be read back from (any text part, tool result text, or string content) holds a `\u0001`. */
function holdsNul(content: unknown): boolean {
  let found = false;
  mapLeaves(
    content,
    (leaf) => {
      found ||= leaf.includes('\u0001');
      return leaf;
    },
    () => !found,
  );
  return found;
}

/** The stored form of a content that refers to `refs`. */
function storedWithRefs(content: unknown, refs: readonly string[]): string {
  return JSON.stringify({ [refsKey]: refs, content });
}

/**
 * A stored content (JSON, as held for the next commit) with `answer`'s text replaced by a
 * reference wherever a text part or string holds it whole; null when it holds none (or already
 * refers to results). For the last assistant message of a run's own session, held in the same
 * commit as the run's result.
 */
export function referToAnswer(stored: string, answer: StoredAnswer): string | null {
  if (mayHoldRefs(stored) || answer.text.length < minReferencedChars || stored.length < answer.text.length) return null;
  const content = JSON.parse(stored) as unknown;
  if (holdsNul(content)) return null;
  const refs: string[] = [];
  const referred = referTo(
    content,
    () => [answer],
    refs,
    (part) => part.type === 'text',
  );
  return refs.length === 0 ? null : storedWithRefs(referred, refs);
}

/** The answers a store wrote, that messages it writes next may repeat. */
export interface AnswerIndex {
  /** A run as written: remembered when it is finished with a result long enough to refer to. */
  note(run: Pick<RunRecord, 'id' | 'parent_session_id' | 'tool_call_id' | 'status' | 'result'>): void;
  /**
   * A message's content as stored (JSON): with references to the answers of the session's runs
   * it repeats, in a tool result of the run's tool call, or (`scan`) in a string or text part (a
   * notification). Throws what `JSON.stringify` throws.
   */
  encode(sessionId: string, content: unknown, scan: boolean): string;
}

interface SessionAnswers {
  all: StoredAnswer[];
  byCall: Map<string, StoredAnswer[]>;
}

/**
 * The answers a store wrote lately, by their runs' parent session: a bounded memory (`limit` runs,
 * `maxChars` characters; the texts are the strings the run records hold), oldest sessions
 * forgotten first. Looking up a session costs
 * one map read, so a message of a session without finished runs pays nothing more.
 */
export function createAnswerIndex({ limit = 8192, maxChars = 8_000_000 }: { limit?: number; maxChars?: number } = {}): AnswerIndex {
  const sessions = new Map<string, SessionAnswers>();
  const byRun = new Map<string, { answer: StoredAnswer; session: string }>();
  let chars = 0;

  function forgetOldest(): void {
    while (byRun.size > limit || chars > maxChars) {
      const [sessionId, entry] = sessions.entries().next().value as [string, SessionAnswers];
      sessions.delete(sessionId);
      for (const answer of entry.all) {
        byRun.delete(answer.runId);
        chars -= answer.text.length;
      }
    }
  }

  return {
    note(run) {
      const text = run.result?.text;
      if (typeof text !== 'string' || text.length < minReferencedChars || !isFinished(run.status) || !plainId.test(run.id)) return;
      // A reference is read back from every `\u0001`, and Postgres cannot extract a text with a NUL.
      if (text.includes('\u0001') || text.includes('\u0000')) return;
      const known = byRun.get(run.id);
      if (known !== undefined) {
        chars += text.length - known.answer.text.length;
        known.answer.text = text;
        return;
      }
      if (text.length > maxChars) return;
      let entry = sessions.get(run.parent_session_id);
      if (entry === undefined) {
        entry = { all: [], byCall: new Map() };
        sessions.set(run.parent_session_id, entry);
      }
      const answer: StoredAnswer = { runId: run.id, text };
      entry.all.push(answer);
      if (run.tool_call_id !== null) {
        const list = entry.byCall.get(run.tool_call_id);
        if (list) list.push(answer);
        else entry.byCall.set(run.tool_call_id, [answer]);
      }
      byRun.set(run.id, { answer, session: run.parent_session_id });
      chars += text.length;
      if (byRun.size > limit || chars > maxChars) forgetOldest();
    },

    encode(sessionId, content, scan) {
      const entry = sessions.get(sessionId);
      if (entry === undefined || (typeof content === 'string' ? !scan : !Array.isArray(content))) return JSON.stringify(content ?? null);
      const refs: string[] = [];
      const referred = referTo(
        content,
        (part) => (part === null || part.type === 'text' ? entry.all : entry.byCall.get(part.toolCallId as string)),
        refs,
        (part) => part.type === 'tool-result' || (scan && part.type === 'text'),
      );
      // Every `\u0001` read back is a reference: a content with one of its own is stored as it is.
      if (refs.length === 0 || holdsNul(content)) return JSON.stringify(content);
      return storedWithRefs(referred, refs);
    },
  };
}
