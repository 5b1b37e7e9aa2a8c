#!/usr/bin/env node
// Runs a scripted model by hand: cadre-scripted-server --script file.yaml [--port 8787] (bin/cadre-scripted-server.js)
import { parseArgs } from 'node:util';
import { loadScript } from './load-script.ts';
import { startScriptedServer } from './scripted-server.ts';
import { scriptedServerOptions, usage } from './scripted-server-usage.ts';

const shortUsage = `${usage.split('\n')[0]}   (cadre-scripted-server --help for more)`;

async function main(): Promise<void> {
  let values;
  try {
    ({ values } = parseArgs({
      options: scriptedServerOptions,
    }));
  } catch (error) {
    console.error(`cadre-scripted-server: ${(error as Error).message}\n${shortUsage}`);
    process.exit(2);
  }
  if (values.help) return console.log(usage);
  const port = Number(values.port);
  if (values.script === undefined || !Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(
      `${values.script === undefined ? 'cadre-scripted-server: --script FILE is required' : `cadre-scripted-server: --port must be a whole number from 0 to 65535, not ${values.port}`}\n${shortUsage}`,
    );
    process.exit(2);
  }
  let script;
  try {
    script = await loadScript(values.script);
  } catch (error) {
    console.error((error as Error).message);
    process.exit(2);
  }
  const server = await startScriptedServer({
    script,
    port,
    onRequest(request, reply) {
      const lastUser = request.messages.findLast((message) => message.role === 'user')?.content ?? '';
      const rule = reply.rule === undefined ? 'no rule' : `rule ${reply.rule}`;
      console.error(`${request.wire} turn ${request.turn} -> ${rule} | ${JSON.stringify(lastUser.slice(0, 60))}`);
    },
  });
  console.log(server.baseURL);
  // All three wires at once, so no option picks one: each client finds its own path.
  console.error(
    [
      `chat completions: POST ${server.baseURL}/chat/completions (openai-compatible: models with --base-url ${server.baseURL})`,
      `messages:         POST ${server.baseURL}/messages (anthropic: models with --base-url ${server.baseURL}; Claude Code with ANTHROPIC_BASE_URL=${server.url})`,
      `responses:        POST ${server.baseURL}/responses (openai: models with --base-url ${server.baseURL}; Codex with base_url = "${server.baseURL}", wire_api = "responses")`,
    ].join('\n'),
  );
  const stop = (): void => void server.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

await main();
