#!/usr/bin/env node
// `cadre-scripted-server --script FILE.yaml [--port 8787]`: cadre's scripted model as a server of
// Chat Completions, Anthropic Messages and OpenAI Responses, to try or test cadre, Claude Code or
// Codex without an LLM (docs/testing.md). Like `cadre`,
// it runs the sources in a checkout of cadre and the compiled `dist/` once installed.
import { existsSync } from 'node:fs';

const sources = new URL('../src/testing/scripted-server-cli.ts', import.meta.url);
await import(existsSync(sources) ? sources.href : '../dist/testing/scripted-server-cli.js');
