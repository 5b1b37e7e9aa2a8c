import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { ConfigError } from '../errors/config-error.ts';
import { exportSession } from '../export/export-session.ts';
import { renderMarkdownExport } from '../export/render-markdown-export.ts';
import { writeLine, type CliContext } from './cli-context.ts';
import type { StoreFlags } from './command-options.ts';
import { openCliStore } from './open-runtime.ts';

/** Options of `cadre export`. */
export interface ExportFlags extends StoreFlags {
  /** @default 'json' */
  format?: 'json' | 'markdown';
  output?: string;
}

/**
 * `cadre export ID`: a session (or the child session of a run) as one JSON document
 * (`cadre.session-export`, version 1) or as a markdown report, on stdout or into a file.
 */
export async function exportCommand(context: CliContext, id: string, flags: ExportFlags): Promise<number> {
  if (flags.json && flags.format === 'markdown') throw new ConfigError('--json and --format markdown ask for different formats: give one.');
  const { store, config, close } = await openCliStore(context, flags);
  try {
    let sessionId = id;
    if (!(await store.getSession(id))) {
      const run = await store.getRun(id);
      if (!run) throw new ConfigError(`No session or run '${id}'. List sessions with: cadre sessions`);
      sessionId = run.child_session_id;
    }
    const document = await exportSession(store, sessionId, { now: () => new Date().toISOString(), limits: config.limits });
    const text = flags.format === 'markdown' ? renderMarkdownExport(document) : `${JSON.stringify(document, null, 2)}\n`;
    if (flags.output === undefined || flags.output === '-') {
      context.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
      return 0;
    }
    const path = resolve(context.cwd, flags.output);
    // Writing there would overwrite the database, and opening it drops this process's SQLite locks.
    const { createStoreFileGuard } = await import('../tools/store-file-guard.ts');
    if (await createStoreFileGuard(store.files).isStoreFile(path)) {
      throw new ConfigError(`-o ${flags.output} is the database itself (or one of its files); write the export to another file.`);
    }
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, text);
    writeLine(context.stderr, `Wrote ${path}`);
    return 0;
  } finally {
    await close();
  }
}
