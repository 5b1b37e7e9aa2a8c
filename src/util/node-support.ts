/**
 * The Node.js versions cadre runs on, as `engines.node` in package.json says. The store needs
 * `node:sqlite` without a flag (22.13, 23.4) and `StatementSync#setReturnArrays` (24.0, back on
 * 22 from 22.16; never on 23). Kept free of imports so that it can run, and speak, on any Node.
 */
export const nodeSupport = {
  /** The `engines.node` range. */
  range: '^22.16.0 || >=24.0.0',
  /**
   * `[major, minor]`: the first supported version of each supported line. A major between two
   * of them is not supported; every major after the last one is.
   */
  minimums: [
    [22, 16],
    [24, 0],
  ] as const,
};

/**
 * Why cadre cannot run on `version`, as one line, or `undefined` when it can.
 * @example unsupportedNodeMessage('23.11.0') // 'cadre needs Node.js 22.16+ or 24+; this is Node 23.11.0 (get Node 24 with ...)'
 */
export function unsupportedNodeMessage(version: string = process.versions.node): string | undefined {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  const { minimums } = nodeSupport;
  const newest = minimums[minimums.length - 1];
  const supported = major > newest[0] || minimums.some(([line, first]) => major === line && minor >= first);
  if (supported) return undefined;
  const wanted = minimums.map(([line, first]) => (first === 0 ? `${line}+` : `${line}.${first}+`)).join(' or ');
  return `cadre needs Node.js ${wanted}; this is Node ${version} (get Node 24 with \`nvm install 24\` or from nodejs.org, or run one command on it with \`npx -y node@24 <path to cadre> ...\`)`;
}
