/**
 * What the scripted model (`cadre/testing`) answers in this example, so it runs with no key and
 * no network: the app's model starts three subagents in the background, then sums up their
 * notifications; the scout lists files (or takes its time), the deployer calls `deploy`, which asks.
 */
import type { RespondFunction } from 'cadre/testing';

export const respond: RespondFunction = (request) => {
  const last = request.messages.at(-1);
  if (request.system.includes('You are the scout')) {
    if (request.messages[0]?.content.includes('slowly')) return { text: 'Surveyed everything, slowly.', delay_ms: 120_000 };
    return last?.role === 'tool'
      ? { text: `The workspace holds: ${last.content.split('\n').slice(0, 3).join(', ')}` }
      : { tool_calls: [{ name: 'list_files', arguments: {} }] };
  }
  if (request.system.includes('You are the deployer')) {
    return last?.role === 'tool' ? { text: `Deploy finished: ${last.content}` } : { tool_calls: [{ name: 'deploy', arguments: { target: 'staging' } }] };
  }
  if (last?.role === 'user' && last.content.startsWith('<subagent-notification>')) {
    const statuses = [...last.content.matchAll(/^status: (\S+)$/gm)].map((match) => match[1]);
    return { text: `Your subagents are done (${statuses.join(', ')}).` };
  }
  if (last?.role === 'tool') return { text: 'I started three subagents; their cards below show how they are doing.' };
  return {
    tool_calls: [
      { name: 'agent', arguments: { agent: 'scout', task: 'List the files of the workspace.', description: 'list the files', run_in_background: true } },
      { name: 'agent', arguments: { agent: 'deployer', task: 'Deploy the site to staging.', description: 'deploy to staging', run_in_background: true } },
      { name: 'agent', arguments: { agent: 'scout', task: 'Survey everything, slowly.', description: 'slow survey', run_in_background: true } },
    ],
  };
};
