/** Splits text into deltas of at most `size` UTF-16 units, never inside a surrogate pair. */
export function splitIntoChunks(text: string, size: number): string[] {
  if (text.length <= size) return text.length === 0 ? [] : [text];
  const chunks: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(start + size, text.length);
    const code = text.charCodeAt(end - 1);
    // A high surrogate at the cut belongs with the next unit: move the cut back, or forward when size is 1.
    if (end < text.length && code >= 0xd800 && code <= 0xdbff) end += end - start > 1 ? -1 : 1;
    chunks.push(text.slice(start, end));
    start = end;
  }
  return chunks;
}
