// The command line of cadre-scripted-server (scripted-server-cli.ts), apart so that tests can read it.

/** What `cadre-scripted-server --help` prints, and a bad command line after its error. */
export const usage = `Usage: cadre-scripted-server --script FILE [--port PORT]

Serves cadre's scripted model on 127.0.0.1 on three wires: OpenAI Chat Completions
(/v1/chat/completions), the OpenAI Responses API (/v1/responses) and the Anthropic Messages API
(/v1/messages), so cadre, Claude Code or Codex run without an LLM, a key or the network.

Options:
  --script FILE   the script: YAML (.yaml, .yml) or JSON (.json), a list of rules or { rules: [...] }
  --port PORT     the port to listen on, 0 for any free port (default: 8787)
  -h, --help      print this help

It prints its base URL (http://127.0.0.1:PORT/v1) on stdout, then one line per request on
stderr (turn, rule, last user message), and runs until Ctrl-C. Any API key is accepted.

Example:
  cadre-scripted-server --script research.yaml --port 8787
  npx cadre run --model openai-compatible:scripted --base-url http://127.0.0.1:8787/v1 "Survey this project."

A script, one rule per request kind (the first rule whose "when" matches answers):
  - when: { system_includes: careful researcher }
    turns:
      - tool_calls: [{ name: read_file, arguments: { path: src/a.ts } }]
      - text: "Both modules export one function each."
  - turns: [{ text: "Echo: {{task}}" }]

The script format, faults and delays: docs/testing.md of the cadre package.`;

/** The options of the command line, as node:util's parseArgs reads them. */
export const scriptedServerOptions = {
  script: { type: 'string' },
  port: { type: 'string', default: '8787' },
  help: { type: 'boolean', short: 'h' },
} as const;
