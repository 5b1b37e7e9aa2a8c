import { parse } from 'yaml';

/** Front-matter keys and values, and how they were read. */
export type FrontMatter = { ok: true; data: unknown; lenient: string | null } | { ok: false; error: string };

const keyLine = /^([A-Za-z_][\w-]*):(?:\s+(.*)|\s*)$/;

class NotText extends Error {}

function scalar(raw: string): unknown {
  try {
    const value: unknown = parse(raw);
    // A value holding `: ` parses as a mapping (or fails); written on one line, it was meant as text.
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? raw : value;
  } catch {
    // A broken list, mapping or quoted string is a mistake to report, not text.
    if (/^[[{"'|>&*!]/.test(raw)) throw new NotText();
    return raw;
  }
}

/**
 * Reads front matter the way people write it for Claude Code, when it is not valid YAML: each
 * `key: value` line is one key, the rest of the line its text (descriptions often hold `: ` or
 * `<example>Context: ...`), and indented lines under a key are read as YAML (a list) or more text.
 */
function readLineByLine(text: string): Record<string, unknown> | null {
  const data: Record<string, unknown> = {};
  let key: string | null = null;
  let inline = '';
  let block: string[] = [];
  const finish = () => {
    if (key === null) return;
    if (block.length === 0) data[key] = scalar(inline);
    else if (inline !== '') data[key] = [inline, ...block.map((line) => line.trim())].join(' ');
    else data[key] = scalar(block.join('\n'));
  };
  try {
    for (const line of text.split('\n')) {
      const match = keyLine.exec(line);
      if (match) {
        finish();
        [key, inline, block] = [match[1], (match[2] ?? '').trim(), []];
      } else if (line.trim() !== '' && !line.trimStart().startsWith('#')) {
        if (key === null || !/^\s/.test(line)) return null;
        block.push(line);
      }
    }
    finish();
  } catch (error) {
    if (error instanceof NotText) return null;
    throw error;
  }
  return data;
}

/**
 * The keys and values of an agent file's front matter: YAML, or else, for files written for Claude
 * Code, read line by line (then `lenient` says why YAML failed). Never throws.
 */
export function readFrontMatter(text: string): FrontMatter {
  try {
    // The leading newline stands for the opening '---', so YAML's line numbers match the file's.
    return { ok: true, data: parse(`\n${text}`) ?? {}, lenient: null };
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0].replace(/:$/, '') : String(error);
    const data = readLineByLine(text);
    return data === null ? { ok: false, error: `invalid YAML in front matter: ${reason}` } : { ok: true, data, lenient: reason };
  }
}
