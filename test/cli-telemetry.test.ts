import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOtlpReceiver, type OtlpReceiver } from '../src/telemetry/otlp-receiver.ts';
import { createWorkspace, type Workspace } from './helpers/cadre-cli.ts';

let workspace: Workspace;
let receiver: OtlpReceiver;
beforeAll(async () => {
  workspace = await createWorkspace();
  receiver = await startOtlpReceiver();
});
afterAll(async () => {
  await workspace.close();
  await receiver.close();
});

describe('cadre run with OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  it('sends the turn, the run under its agent tool call, and the model and tool calls to the collector before it exits', async () => {
    const result = await workspace.run(['run', ...workspace.modelFlags, 'delegate please'], {
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_SERVICE_NAME: 'cadre-e2e' },
    });
    expect(result.code).toBe(0);
    const { spans } = receiver;
    const turn = spans.find((span) => span.name === 'cadre.turn main')!;
    const run = spans.find((span) => span.name === 'cadre.run scout')!;
    expect(turn).toBeDefined();
    expect(run.traceId).toBe(turn.traceId);
    const agentCall = spans.find((span) => span.spanId === run.parentSpanId)!;
    expect(agentCall.attributes).toMatchObject({ 'gen_ai.tool.name': 'agent', 'cadre.tool.outcome': 'ok' });
    const underRun = spans.filter((span) => span.traceId === run.traceId && span.name.startsWith('execute_tool list_files'));
    expect(underRun).toHaveLength(1);
    expect(underRun[0]!.attributes).toMatchObject({ 'cadre.agent': 'scout', 'cadre.run.id': run.attributes['cadre.run.id'] });
    expect(receiver.requests.map((request) => request.body.toString('utf8')).join('')).toContain('"cadre-e2e"');
  });
});
