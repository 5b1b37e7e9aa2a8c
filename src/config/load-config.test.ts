import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../errors/index.ts';
import { defaultLimits } from './limits.ts';
import { loadConfig, type LoadConfigOptions } from './load-config.ts';
import { defaultModelAliases } from './model-aliases.ts';

let cwd: string;
// These tests are about merging: the workspace's file applies whole, as under --trust (its trust has tests of its own).
const trusted = { CADRE_TRUST: '1' };

beforeEach(async () => {
  cwd = await mkdtemp(join(tmpdir(), 'cadre-config-'));
});

afterEach(async () => {
  await rm(cwd, { recursive: true, force: true });
});

async function writeConfig(contents: unknown, path = join(cwd, 'cadre.config.json')) {
  await writeFile(path, typeof contents === 'string' ? contents : JSON.stringify(contents));
  return path;
}

async function failure(options: Partial<LoadConfigOptions> = {}): Promise<string> {
  const error = await loadConfig({ cwd, env: trusted, ...options }).catch((caught: unknown) => caught);
  expect(ConfigError.isInstance(error)).toBe(true);
  return (error as Error).message;
}

describe('loadConfig', () => {
  it('uses the defaults when there is no file, flag or variable', async () => {
    expect(await loadConfig({ cwd, env: trusted })).toEqual({
      db: join(cwd, '.cadre', 'cadre.db'),
      limits: defaultLimits,
      agentsDirs: [],
      agent: 'main',
      mcpServers: {},
      harnesses: {},
      permissions: {},
      sandbox: { mode: 'auto', network: false, writable: [] },
      worktree: { baseRef: 'HEAD' },
      configPath: null,
      modelAliases: defaultModelAliases,
      workspace: { part: 'cadre.config.json', path: null, items: [], hash: null, state: 'none', agentsDirs: [] },
    });
  });

  it("reads worktree.baseRef, which applies untrusted, and names worktree's keys on a mistake", async () => {
    await writeFile(join(cwd, 'cadre.config.json'), JSON.stringify({ worktree: { baseRef: 'main' } }));
    try {
      expect((await loadConfig({ cwd, env: {} })).worktree).toEqual({ baseRef: 'main' });
      await writeFile(join(cwd, 'cadre.config.json'), JSON.stringify({ worktree: { base: 'main' } }));
      expect(await failure()).toBe(`${join(cwd, 'cadre.config.json')}: worktree.base: unknown key (known keys: baseRef)`);
    } finally {
      await rm(join(cwd, 'cadre.config.json'));
    }
  });

  it('reads sandbox settings, resolves writable paths against the file, and refuses a list of hosts or an unknown key', async () => {
    await writeFile(join(cwd, 'cadre.config.json'), JSON.stringify({ sandbox: { mode: 'required', network: true, writable: ['../shared', '/var/cache/x'] } }));
    try {
      expect((await loadConfig({ cwd, env: trusted })).sandbox).toEqual({
        mode: 'required',
        network: true,
        writable: [join(cwd, '..', 'shared'), '/var/cache/x'],
      });
      await writeFile(join(cwd, 'cadre.config.json'), JSON.stringify({ sandbox: { network: ['registry.npmjs.org'] } }));
      expect(await failure()).toBe(
        `${join(cwd, 'cadre.config.json')}: sandbox.network: a list of hosts needs a filtering proxy, which cadre does not have on this platform: only true (every host) or false (none, the default) is supported`,
      );
      await writeFile(join(cwd, 'cadre.config.json'), JSON.stringify({ sandbox: { mode: 'strict' } }));
      expect(await failure()).toContain('cadre.config.json: sandbox.mode: must be one of auto, required, off');
      await writeFile(join(cwd, 'cadre.config.json'), JSON.stringify({ sandbox: { net: true } }));
      expect(await failure()).toContain('cadre.config.json: sandbox.net: unknown key (known keys: mode, network, writable)');
    } finally {
      await rm(join(cwd, 'cadre.config.json'), { force: true });
    }
  });

  it("merges the file's permission rules with --allow and --deny, and names a bad rule", async () => {
    await writeFile(join(cwd, 'cadre.config.json'), JSON.stringify({ permissions: { allow: ['read'], ask: ['bash(git *)'], deny: ['network'] } }));
    try {
      const config = await loadConfig({ cwd, env: trusted, flags: { allow: ['bash(npm test*)'], deny: ['write_file(.env)'] } });
      expect(config.permissions).toEqual({ allow: ['read', 'bash(npm test*)'], ask: ['bash(git *)'], deny: ['network', 'write_file(.env)'] });
      expect(await failure({ flags: { allow: ['bash('] } })).toBe(
        "--allow: permissions.allow: Invalid permission rule 'bash(': a rule is a risk (read, write, exec, network), a tool name (bash) or a tool with an argument pattern (bash(npm test*), write_file(docs/*)).",
      );
      await writeFile(join(cwd, 'cadre.config.json'), JSON.stringify({ permissions: { deny: ['rm -rf'] } }));
      expect(await failure()).toContain("cadre.config.json: permissions.deny: Invalid permission rule 'rm -rf'");
      await writeFile(join(cwd, 'cadre.config.json'), JSON.stringify({ permissions: { allowed: ['bash'] } }));
      expect(await failure()).toContain('cadre.config.json: permissions.allowed: unknown key (known keys: allow, ask, deny)');
    } finally {
      await rm(join(cwd, 'cadre.config.json'), { force: true });
    }
  });

  it('lets flags beat the environment and the environment beat the file', async () => {
    await writeConfig({ model: 'openai:file', baseURL: 'http://file/v1', db: 'file.db' });
    const env = { CADRE_MODEL: 'openai:env', CADRE_BASE_URL: 'http://env/v1', CADRE_DB: 'env.db' };
    const flags = { model: 'openai:flag', baseURL: 'http://flag/v1', db: 'flag.db' };

    const fromFlags = await loadConfig({ cwd, env, flags });
    expect([fromFlags.model, fromFlags.baseURL, fromFlags.db]).toEqual(['openai:flag', 'http://flag/v1', join(cwd, 'flag.db')]);
    const fromEnv = await loadConfig({ cwd, env });
    expect([fromEnv.model, fromEnv.baseURL, fromEnv.db]).toEqual(['openai:env', 'http://env/v1', join(cwd, 'env.db')]);
    const fromFile = await loadConfig({ cwd, env: { ...trusted, CADRE_MODEL: '' } });
    expect([fromFile.model, fromFile.baseURL, fromFile.db]).toEqual(['openai:file', 'http://file/v1', join(cwd, 'file.db')]);
    expect(fromFile.configPath).toBe(join(cwd, 'cadre.config.json'));
  });

  it('resolves paths in a --config file against its own directory and flag paths against cwd', async () => {
    await mkdir(join(cwd, 'settings'));
    await writeConfig({ db: 'data/cadre.db', agents: ['agents'] }, join(cwd, 'settings', 'cadre.json'));

    const config = await loadConfig({ cwd, env: trusted, configFile: 'settings/cadre.json', flags: { agentsDirs: ['mine'] } });

    expect(config.db).toBe(join(cwd, 'settings', 'data', 'cadre.db'));
    expect(config.agentsDirs).toEqual([join(cwd, 'settings', 'agents'), join(cwd, 'mine')]);
  });

  it('keeps database URLs and :memory: as written', async () => {
    const url = 'postgres://localhost:5432/cadre';
    expect((await loadConfig({ cwd, env: trusted, flags: { db: url } })).db).toBe(url);
    expect((await loadConfig({ cwd, env: { ...trusted, CADRE_DB: ':memory:' } })).db).toBe(':memory:');
  });

  it('merges file limits over the defaults and passes summarize and the --agent flag through', async () => {
    await writeConfig({ limits: { maxDepth: 2, runTimeoutMs: 60_000 }, summarize: { enabled: false, maxChars: 3000, timeoutMs: 20_000 } });
    const config = await loadConfig({ cwd, env: trusted, flags: { agent: 'lead' } });
    expect(config.limits).toEqual({ ...defaultLimits, maxDepth: 2, runTimeoutMs: 60_000 });
    expect(config.summarize).toEqual({ enabled: false, maxChars: 3000, timeoutMs: 20_000 });
    expect(config.agent).toBe('lead');
    expect(config.mcpServers).toEqual({});
  });

  it('reads mcpServers in the format Claude Desktop and Claude Code use', async () => {
    const mcpServers = {
      github: { command: 'npx', args: ['-y', 'server-github'], env: { TOKEN: 'x' } },
      docs: { type: 'http', url: 'https://example.com/mcp', headers: { Authorization: 'Bearer y' } },
    };
    await writeConfig({ mcpServers });
    expect((await loadConfig({ cwd, env: trusted })).mcpServers).toEqual(mcpServers);
  });

  it('reads the API key from CADRE_API_KEY and refuses one in the file', async () => {
    expect((await loadConfig({ cwd, env: { ...trusted, CADRE_API_KEY: 'sk-env' } })).apiKey).toBe('sk-env');
    await writeConfig({ apiKey: 'sk-in-a-file-0123456789' });
    const message = await failure();
    expect(message).toContain('apiKey: is not read from files on purpose');
    expect(message).not.toContain('sk-in-a-file');
  });

  it('fails when the --config file does not exist', async () => {
    expect(await failure({ configFile: 'missing.json' })).toBe(`Config file not found: ${join(cwd, 'missing.json')} (given with --config)`);
  });

  it('names the file for invalid JSON without quoting its text', async () => {
    const path = await writeConfig('nope-sk-secret-text');
    const message = await failure();
    expect(message).toMatch(new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: invalid JSON`));
    expect(message).not.toContain('sk-secret');
  });

  it.each<[unknown, string]>([
    [{ modle: 'x' }, 'modle: unknown key'],
    [{ limits: { maxDepht: 2 } }, 'limits.maxDepht: unknown limit'],
    [{ limits: { maxDepth: 0 } }, 'limits.maxDepth: must be a positive whole number'],
    [{ limits: { maxResultChars: 10.5 } }, 'limits.maxResultChars: must be a positive whole number'],
    [{ summarize: { enabled: 'yes' } }, 'summarize.enabled: must be true or false'],
    [{ summarize: { maxChars: 10 } }, 'summarize.maxChars: must be a whole number of characters, 200 or more'],
    [{ summarize: { timeoutMs: 0 } }, 'summarize.timeoutMs: must be a whole number of milliseconds, 1 or more'],
    [{ summarize: { maxchars: 10 } }, 'summarize.maxchars: unknown key (known keys: model, enabled, maxChars, timeoutMs)'],
    [{ telemetry: { protocol: 'grpc' } }, "telemetry.protocol: must be 'http/json' or 'http/protobuf'"],
    [{ telemetry: { endpoint: 'collector' } }, 'telemetry.endpoint: must be a URL like http://localhost:4318'],
    [{ telemetry: { recordContents: true } }, 'telemetry.recordContents: unknown key (known keys: enabled, endpoint, protocol, recordContent)'],
    [{ baseURL: 'not a url' }, 'baseURL: must be a URL'],
    [{ mcpServers: { gh: { args: ['x'] } } }, 'mcpServers.gh: must be {"command", "args", "env"} (stdio) or {"type": "http", "url", "headers"}'],
    [{ mcpServers: { 'bad name': { command: 'x' } } }, 'mcpServers.bad name: server names must be 1 to 40 letters, digits'],
    [{ agents: 'dir' }, 'agents: must be a list of directory paths'],
    [[1, 2], 'must hold a JSON object'],
  ])('rejects %j naming the file and the field', async (contents, expected) => {
    const path = await writeConfig(contents);
    expect(await failure()).toContain(`${path}: ${expected}`);
  });

  it('rejects a base URL flag or variable that is not a URL', async () => {
    expect(await failure({ flags: { baseURL: 'localhost' } })).toContain('--base-url must be a URL');
    expect(await failure({ env: { ...trusted, CADRE_BASE_URL: 'localhost' } })).toContain('CADRE_BASE_URL must be a URL');
  });

  it('reads the file CADRE_CONFIG names, which must exist, and lets --config beat it', async () => {
    await mkdir(join(cwd, 'elsewhere'));
    await writeConfig({ model: 'openai:from-env-file' }, join(cwd, 'elsewhere', 'cadre.json'));
    await writeConfig({ model: 'openai:from-flag-file' }, join(cwd, 'flag.json'));
    const env = { CADRE_CONFIG: 'elsewhere/cadre.json' };
    expect((await loadConfig({ cwd, env })).model).toBe('openai:from-env-file');
    expect((await loadConfig({ cwd, env, configFile: 'flag.json' })).model).toBe('openai:from-flag-file');
    expect(await failure({ env: { ...trusted, CADRE_CONFIG: 'nope.json' } })).toBe(
      `Config file not found: ${join(cwd, 'nope.json')} (given with CADRE_CONFIG)`,
    );
  });

  it("puts the user's $XDG_CONFIG_HOME/cadre/config.json under the project's file, key by key", async () => {
    const xdg = join(cwd, 'xdg');
    await mkdir(join(xdg, 'cadre'), { recursive: true });
    await writeConfig(
      {
        model: 'openai:user',
        db: 'user.db',
        agents: ['my-agents'],
        limits: { maxDepth: 3, maxParallelTasks: 4 },
        modelAliases: { fast: 'openai:gpt-mini', sonnet: 'anthropic:mine' },
      },
      join(xdg, 'cadre', 'config.json'),
    );
    await writeConfig({ model: 'openai:project', agents: ['agents'], limits: { maxDepth: 2 } });
    const config = await loadConfig({ cwd, env: { ...trusted, XDG_CONFIG_HOME: xdg } });
    expect(config.model).toBe('openai:project');
    expect(config.db).toBe(join(xdg, 'cadre', 'user.db'));
    expect(config.agentsDirs).toEqual([join(xdg, 'cadre', 'my-agents'), join(cwd, 'agents')]);
    expect(config.limits).toEqual({ ...defaultLimits, maxDepth: 2, maxParallelTasks: 4 });
    expect(config.modelAliases).toEqual({ ...defaultModelAliases, fast: 'openai:gpt-mini', sonnet: 'anthropic:mine' });
    expect(config.configPath).toBe(join(cwd, 'cadre.config.json'));
  });

  it('reads ~/.config/cadre/config.json when XDG_CONFIG_HOME is unset, and names it when it is the only file', async () => {
    const home = join(cwd, 'home');
    await mkdir(join(home, '.config', 'cadre'), { recursive: true });
    const path = await writeConfig({ model: 'openai:home' }, join(home, '.config', 'cadre', 'config.json'));
    const config = await loadConfig({ cwd, env: trusted, home });
    expect([config.model, config.configPath]).toEqual(['openai:home', path]);
    await writeConfig({ modle: 'x' }, path);
    expect(await failure({ home })).toContain(`${path}: modle: unknown key`);
  });

  it('rejects modelAliases that do not map names to model specs', async () => {
    const path = await writeConfig({ modelAliases: { sonnet: 3 } });
    expect(await failure()).toContain(`${path}: modelAliases.sonnet: must be a model spec`);
  });
});

describe('queue', () => {
  it('takes the queue from the flag, then CADRE_QUEUE, then the file, and has none by default', async () => {
    expect((await loadConfig({ cwd, env: trusted })).queue).toBeUndefined();
    await writeConfig({ queue: 'redis://file:6379' });
    expect((await loadConfig({ cwd, env: trusted })).queue).toBe('redis://file:6379');
    expect((await loadConfig({ cwd, env: { ...trusted, CADRE_QUEUE: 'redis://env:6379?prefix=a' } })).queue).toBe('redis://env:6379?prefix=a');
    expect((await loadConfig({ cwd, env: { ...trusted, CADRE_QUEUE: 'redis://env:6379' }, flags: { queue: 'rediss://flag:6380' } })).queue).toBe(
      'rediss://flag:6380',
    );
  });

  it('refuses a queue that is not a redis:// URL, naming where it came from and hiding a password', async () => {
    expect(await failure({ env: { ...trusted, CADRE_QUEUE: 'amqp://user:secret@mq:5672' } })).toBe(
      "CADRE_QUEUE must be a redis:// URL like redis://127.0.0.1:6379, not 'amqp://mq:5672'.",
    );
    await writeConfig({ queue: 'postgres://db/x' });
    expect(await failure()).toContain('queue: must be a redis:// URL');
  });
});
