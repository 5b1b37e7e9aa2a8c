import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Writes Codex's `config.toml` in `codexHome`: a model provider on the scripted server's Responses
 * wire (`baseURL`), its key read from `SCRIPTED_API_KEY`, no retries (a test's failure shows at once).
 */
export async function writeCodexConfig(codexHome: string, baseURL: string): Promise<void> {
  const config = [
    'model = "scripted"',
    'model_provider = "scripted"',
    '[model_providers.scripted]',
    'name = "Scripted"',
    `base_url = "${baseURL}"`,
    'wire_api = "responses"',
    'env_key = "SCRIPTED_API_KEY"',
    'request_max_retries = 0',
    'stream_max_retries = 0',
  ];
  await writeFile(join(codexHome, 'config.toml'), `${config.join('\n')}\n`);
}

/** opencode's configuration (its `OPENCODE_CONFIG` file): its Anthropic provider pointed at the scripted server's Messages wire. */
export function opencodeConfig(baseURL: string): Record<string, unknown> {
  return {
    provider: { anthropic: { options: { baseURL, apiKey: 'test-anthropic-key' }, models: { scripted: { name: 'scripted' } } } },
    model: 'anthropic/scripted',
  };
}
