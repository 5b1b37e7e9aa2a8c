/**
 * A command's output kept within a budget: the first `headChars` and the last `tailChars`
 * characters, and a count of what was dropped between them, however much the command prints
 * (memory stays bounded).
 */
export class CappedOutput {
  readonly #headChars: number;
  readonly #tailChars: number;
  #head = '';
  #tail = '';
  #total = 0;

  constructor({ headChars, tailChars }: { headChars: number; tailChars: number }) {
    this.#headChars = headChars;
    this.#tailChars = tailChars;
  }

  /** Adds text in the order it arrived. */
  append(text: string): void {
    this.#total += text.length;
    if (this.#head.length < this.#headChars) {
      const room = this.#headChars - this.#head.length;
      this.#head += text.slice(0, room);
      text = text.slice(room);
    }
    if (text === '') return;
    this.#tail += text;
    // Trimmed only when twice over budget, so a stream of small chunks costs linear time.
    if (this.#tail.length > 2 * this.#tailChars) this.#tail = this.#tail.slice(-this.#tailChars);
  }

  /** Characters received in all. */
  get total(): number {
    return this.#total;
  }

  /** The head, a line saying how many characters were omitted (if any), and the tail. */
  toString(): string {
    const tail = this.#tail.slice(-this.#tailChars);
    const omitted = this.#total - this.#head.length - tail.length;
    if (omitted === 0) return this.#head + tail;
    const head = this.#head.endsWith('\n') ? this.#head : `${this.#head}\n`;
    return `${head}[… ${omitted} characters omitted …]\n${tail}`;
  }
}
