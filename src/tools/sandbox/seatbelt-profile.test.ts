import { describe, expect, it } from 'vitest';
import { bubblewrapArguments } from './bubblewrap-arguments.ts';
import { seatbeltProfile } from './seatbelt-profile.ts';

const policy = {
  root: '/Users/me/project',
  writable: ['/Users/me/shared "x"'],
  readOnly: ['/Users/me/project/.cadre', '/Users/me/project/cadre.config.json'],
  network: false,
};

describe('seatbeltProfile', () => {
  it('denies writes but to the workspace, writable places, the temp folder and terminals, then the protected paths, and IP networking', () => {
    expect(seatbeltProfile(policy, '/private/var/folders/t/cadre-sandbox-1').split('\n')).toEqual([
      '(version 1)',
      '(allow default)',
      '(deny file-write*)',
      '(allow file-write* (subpath "/Users/me/project") (subpath "/Users/me/shared \\"x\\"") (subpath "/private/var/folders/t/cadre-sandbox-1") (literal "/dev/null") (literal "/dev/zero") (regex #"^/dev/tty") (regex #"^/dev/fd/"))',
      '(deny file-write* (subpath "/Users/me/project/.cadre") (subpath "/Users/me/project/cadre.config.json"))',
      '(deny network-outbound (remote ip "*:*"))',
      '(deny network-bind (local ip "*:*"))',
    ]);
  });

  it('leaves networking alone when the network is allowed', () => {
    expect(seatbeltProfile({ ...policy, network: true, readOnly: [] }, '/tmp/x')).not.toMatch(/network|\(deny file-write\* \(subpath/);
  });
});

describe('bubblewrapArguments', () => {
  it('binds the writable places, then the protected paths read-only over them, and shares the network only when allowed', () => {
    const closed = bubblewrapArguments({ ...policy, root: '/w', writable: ['/shared'], readOnly: ['/w/.cadre'] });
    expect(closed.join(' ')).toBe(
      '--die-with-parent --unshare-all --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --bind-try /w /w --bind-try /shared /shared --ro-bind-try /w/.cadre /w/.cadre --chdir /w',
    );
    expect(bubblewrapArguments({ ...policy, network: true })).toContain('--share-net');
  });
});
