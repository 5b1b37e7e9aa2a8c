import { execFile } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The cadre checkout this file belongs to. */
export const repository = resolve(import.meta.dirname, '..', '..');

/** A fresh project with cadre installed from its own tarball. */
export interface PackedInstall {
  /** The `.tgz` that `npm pack` made. */
  tarball: string;
  /** The project's folder, with `node_modules/cadre` and `node_modules/.bin/cadre`. */
  project: string;
  /** The installed command, `<project>/node_modules/.bin/cadre`. */
  bin: string;
  /** PATH with this process's Node first, so that `npx` and the bin's shebang use it. */
  path: string;
}

/**
 * Packs this checkout with `npm pack` (whose `prepack` builds `dist/`) into `directory`, and
 * installs the tarball into a new project `<directory>/project` as a user would. The
 * dependencies come from npm's cache where they are (they are after the repository's `npm ci`).
 */
export async function installPacked(directory: string): Promise<PackedInstall> {
  const path = `${dirname(process.execPath)}:${process.env.PATH ?? ''}`;
  const env = { ...process.env, PATH: path };
  const packed = await run('npm', ['pack', '--json', '--pack-destination', directory], { cwd: repository, env });
  const [{ filename }] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as [{ filename: string }];
  const tarball = join(directory, filename);
  const project = join(directory, 'project');
  await mkdir(project);
  await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'user-project', private: true, type: 'module' }));
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', tarball], { cwd: project, env });
  return { tarball, project, bin: join(project, 'node_modules', '.bin', 'cadre'), path };
}

/** The version in the checkout's package.json. */
export async function packageVersion(): Promise<string> {
  return (JSON.parse(await readFile(join(repository, 'package.json'), 'utf8')) as { version: string }).version;
}
