/**
 * The Node.js versions cadre runs on, as `engines.node` in package.json says: `node:sqlite`
 * without a flag arrived in 22.13 and 23.4. Kept free of imports so that it can run, and
 * speak, on any Node.
 */
export const nodeSupport = {
  /** The `engines.node` range. */
  range: '^22.13.0 || >=23.4.0',
  /** The first supported minor of each major that has one; every later major is supported. */
  minimums: [
    [22, 13],
    [23, 4],
  ] as const,
};

/**
 * Why cadre cannot run on `version`, as one line, or `undefined` when it can.
 * @example unsupportedNodeMessage('20.11.1') // 'cadre needs Node.js >= 22.13 (or >= 23.4 on 23); this is Node 20.11.1'
 */
export function unsupportedNodeMessage(version: string = process.versions.node): string | undefined {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  const [first, ...rest] = nodeSupport.minimums;
  const last = nodeSupport.minimums[nodeSupport.minimums.length - 1];
  const supported = nodeSupport.minimums.some(([supportedMajor, supportedMinor]) => major === supportedMajor && minor >= supportedMinor) || major > last[0];
  if (supported) return undefined;
  const others = rest.map(([otherMajor, otherMinor]) => `>= ${otherMajor}.${otherMinor} on ${otherMajor}`).join(', ');
  return `cadre needs Node.js >= ${first[0]}.${first[1]}${others ? ` (or ${others})` : ''}; this is Node ${version}`;
}
