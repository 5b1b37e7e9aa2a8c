const warned = new Set<string>();

/**
 * Writes `message` with `write` unless this process wrote the same message before: a warning
 * about configuration (an unknown key, a missing sandbox) is said once per process, however
 * often the configuration is loaded.
 * @returns whether it was written now.
 * @example warnOnce('colour: not a cadre key', (line) => process.stderr.write(`${line}\n`))
 */
export function warnOnce(message: string, write: (message: string) => void): boolean {
  if (warned.has(message)) return false;
  warned.add(message);
  write(message);
  return true;
}
