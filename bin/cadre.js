#!/usr/bin/env node
// The `cadre` command. Plain JavaScript on purpose: it must run far enough on any Node to say
// which Node it needs. The command line itself is TypeScript, run by Node's type stripping.

const [major, minor] = process.versions.node.split('.').map(Number);
const typeStripping = process.features && process.features.typescript;
if (major < 22 || (major === 22 && minor < 18) || !typeStripping) {
  process.stderr.write(
    `cadre needs Node 24 (or Node >= 22.18 with type stripping); this is Node ${process.versions.node}. ` +
      'Inside the cadre repository, `npx cadre` uses the pinned Node 24.\n',
  );
  process.exit(2);
}

const { main } = await import('../src/cli/main.ts');
const code = await main(process.argv.slice(2));
// Let pending output drain, then leave even if a socket or timer is still open.
process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
