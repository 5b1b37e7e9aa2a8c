import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configLocations, databaseFromFlagsAndEnv, userConfigDirectory } from './config-locations.ts';

describe('configLocations', () => {
  it('names the project file by --config, else CADRE_CONFIG, else ./cadre.config.json', () => {
    expect(configLocations({ cwd: '/p', env: {}, home: '/h' })).toEqual({
      project: '/p/cadre.config.json',
      projectNamedBy: null,
      user: '/h/.config/cadre/config.json',
      userDirectory: '/h/.config/cadre',
    });
    expect(configLocations({ cwd: '/p', env: { CADRE_CONFIG: 'conf/c.json' }, home: '/h' })).toMatchObject({
      project: '/p/conf/c.json',
      projectNamedBy: 'CADRE_CONFIG',
    });
    expect(configLocations({ cwd: '/p', configFile: '/etc/c.json', env: { CADRE_CONFIG: 'x.json' }, home: '/h' })).toMatchObject({
      project: '/etc/c.json',
      projectNamedBy: '--config',
    });
  });

  it('puts the user folder under XDG_CONFIG_HOME when it is an absolute path, as the XDG specification says', () => {
    expect(userConfigDirectory({ XDG_CONFIG_HOME: '/x' }, '/h')).toBe(join('/x', 'cadre'));
    expect(userConfigDirectory({ XDG_CONFIG_HOME: 'relative' }, '/h')).toBe(join('/h', '.config', 'cadre'));
    expect(userConfigDirectory({ XDG_CONFIG_HOME: '' }, '/h')).toBe(join('/h', '.config', 'cadre'));
  });

  it('takes the database from --db, else CADRE_DB, keeping URLs and :memory: as written', () => {
    expect(databaseFromFlagsAndEnv('/p', 'a.db', { CADRE_DB: 'b.db' })).toBe('/p/a.db');
    expect(databaseFromFlagsAndEnv('/p', undefined, { CADRE_DB: 'b.db' })).toBe('/p/b.db');
    expect(databaseFromFlagsAndEnv('/p', ' ', {})).toBeUndefined();
    expect(databaseFromFlagsAndEnv('/p', 'postgres://u@h/db', {})).toBe('postgres://u@h/db');
    expect(databaseFromFlagsAndEnv('/p', ':memory:', {})).toBe(':memory:');
  });
});
