/** The last lines a program wrote to stderr, kept small: what a failure shows of them. */
export interface StderrTail {
  add(chunk: string): void;
  /** Its last non-empty lines, oldest first. */
  lines(): string[];
}

/** Keeps the last `count` lines (of at most 300 characters each) of a stream of text. */
export function createStderrTail(count = 5): StderrTail {
  let kept = '';
  return {
    add(chunk) {
      kept = (kept + chunk).slice(-8_192);
    },
    lines() {
      return kept
        .split('\n')
        .map((line) => line.trim())
        .filter((line) => line !== '')
        .slice(-count)
        .map((line) => (line.length > 300 ? `${line.slice(0, 297)}...` : line));
    },
  };
}
