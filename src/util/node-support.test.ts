import { describe, expect, it } from 'vitest';
import { unsupportedNodeMessage } from './node-support.ts';

describe('unsupportedNodeMessage', () => {
  it('lets 22.16 and later 22s, 24 and every later major through', () => {
    for (const version of ['22.16.0', '22.21.1', '24.0.0', '24.21.0', '25.9.0', '30.1.2']) expect(unsupportedNodeMessage(version)).toBeUndefined();
  });

  it('names the versions it needs, in one line, for older 22s, all of 23 and anything before 22', () => {
    for (const version of ['22.15.1', '22.13.0', '23.11.0', '23.4.0', '20.20.2', '18.0.0']) {
      expect(unsupportedNodeMessage(version)).toBe(
        `cadre needs Node.js 22.16+ or 24+; this is Node ${version} (get Node 24 with \`nvm install 24\` or from nodejs.org, or run one command on it with \`npx -y node@24 <path to cadre> ...\`)`,
      );
    }
  });
});
