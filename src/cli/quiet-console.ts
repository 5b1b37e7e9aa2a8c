/**
 * Silences `console.error` while a command runs, unless `--debug`, and returns a function that
 * restores it. Libraries log there on their own: the AI SDK prints every model error in full
 * (stack, request body, response headers) when no `onError` is given. cadre reports those errors
 * itself, in one line, through the run or the turn they belong to.
 */
export function quietConsole(debug: boolean): () => void {
  const original = console.error;
  if (!debug) console.error = () => {};
  return () => {
    console.error = original;
  };
}
