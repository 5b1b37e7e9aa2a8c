import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { exportSession } from '../export-session.ts';
import { createSqliteStore } from './sqlite-store.ts';

/**
 * `test/fixtures/store-v4/cadre.db` was written by cadre at main 1d55694 (schema version 4, the
 * last before issue 21's batched writes) with `writeExportScenario`, and `exports.json` is what
 * that build exported from it (`exportSession`, `now` fixed). Neither is regenerated: they stand
 * for a user's existing database.
 */
const fixtures = fileURLToPath(new URL('../../../test/fixtures/store-v4/', import.meta.url));
const folder = mkdtempSync(join(tmpdir(), 'cadre-older-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

describe('a database written by an older cadre', () => {
  it('exports every session exactly as the cadre that wrote it did', async () => {
    const path = join(folder, 'export', 'cadre.db');
    rmSync(join(folder, 'export'), { recursive: true, force: true });
    mkdirSync(join(folder, 'export'), { recursive: true });
    copyFileSync(join(fixtures, 'cadre.db'), path);
    const expected = JSON.parse(readFileSync(join(fixtures, 'exports.json'), 'utf8')) as Record<string, unknown>;
    const store = createSqliteStore({ path });
    const now = () => '2025-01-02T00:00:00.000Z';
    for (const [id, document] of Object.entries(expected)) expect(await exportSession(store, id, { now })).toEqual(document);
    await store.close();
  });
});
