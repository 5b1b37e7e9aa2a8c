import type { SandboxPolicy } from './sandbox-policy.ts';

/** A string literal of the Seatbelt profile language. */
function quoted(text: string): string {
  return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/**
 * A Seatbelt profile (`sandbox-exec -p`) for `policy`: everything allowed except writes outside
 * the workspace, `writable`, `temp` and the terminal devices; writes to the protected paths; and,
 * without network, connections over IP. Seatbelt applies the last matching rule, so the read-only
 * paths come after the writable ones.
 * @param temp the box's temp folder (real path), which commands get as `TMPDIR`
 */
export function seatbeltProfile(policy: SandboxPolicy, temp: string): string {
  const writable = [policy.root, ...policy.writable, temp].map((path) => `(subpath ${quoted(path)})`);
  const lines = [
    '(version 1)',
    '(allow default)',
    '(deny file-write*)',
    `(allow file-write* ${[...writable, '(literal "/dev/null")', '(literal "/dev/zero")', '(regex #"^/dev/tty")', '(regex #"^/dev/fd/")'].join(' ')})`,
  ];
  if (policy.readOnly.length > 0) lines.push(`(deny file-write* ${policy.readOnly.map((path) => `(subpath ${quoted(path)})`).join(' ')})`);
  if (!policy.network) lines.push('(deny network-outbound (remote ip "*:*"))', '(deny network-bind (local ip "*:*"))');
  return lines.join('\n');
}
