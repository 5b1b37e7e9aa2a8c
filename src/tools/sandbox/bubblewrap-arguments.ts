import type { SandboxPolicy } from './sandbox-policy.ts';

/**
 * The part of a bubblewrap command line every box shares: new user, pid, ipc, uts and (without
 * network) network namespaces; the whole file system read-only; fresh `/dev`, `/proc` and a private
 * `/tmp`; the box dies with the process that made it. Killing the box's first process ends every
 * process inside, because it is the init of the box's pid namespace.
 */
export function bubblewrapBaseArguments({ network }: { network: boolean }): string[] {
  return [
    '--die-with-parent',
    '--unshare-all',
    ...(network ? ['--share-net'] : []),
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--proc',
    '/proc',
    '--tmpfs',
    '/tmp',
  ];
}

/**
 * The bubblewrap options that make a box of `policy`, to be followed by `--` and the command:
 * writable binds for the workspace and `writable`, then read-only binds over the protected paths
 * inside them (later mounts cover earlier ones), and the workspace as working directory.
 * @example bubblewrapArguments({ root: '/w', writable: [], readOnly: ['/w/.cadre'], network: false })
 */
export function bubblewrapArguments(policy: SandboxPolicy): string[] {
  return [
    ...bubblewrapBaseArguments({ network: policy.network }),
    ...(policy.readable ?? []).flatMap((path) => ['--ro-bind-try', path, path]),
    ...[policy.root, ...policy.writable].flatMap((path) => ['--bind-try', path, path]),
    ...policy.readOnly.flatMap((path) => ['--ro-bind-try', path, path]),
    '--chdir',
    policy.root,
  ];
}
