import type { WorkflowView } from '../workflows/workflow-view.ts';

/** What `cadre workflow show` prints of a workflow: its state, phases, log, runs and result. */
export function workflowLines(workflow: WorkflowView): string[] {
  const lines = [
    `${workflow.id}  ${workflow.name}  ${workflow.status}`,
    `  session: ${workflow.session_id}`,
    `  source:  ${workflow.source.kind === 'file' ? workflow.source.path : workflow.source.kind === 'registered' ? `registered as '${workflow.source.name}'` : 'a script a model wrote'}`,
    `  started: ${workflow.created_at}${workflow.ended_at ? `  ended: ${workflow.ended_at}` : ''}`,
    `  input:   ${JSON.stringify(workflow.input)}`,
  ];
  if (workflow.phases.length > 0) lines.push(`  phases:  ${workflow.phases.map((phase) => phase.name).join(' → ')}`);
  if (workflow.log.length > 0) {
    lines.push('  log:');
    for (const line of workflow.log) lines.push(`    ${line.at}  ${line.text}`);
  }
  lines.push(`  runs (${workflow.runs.length}):`);
  for (const run of workflow.runs) lines.push(`    ${run.id}  ${run.key.padEnd(10)}  ${run.agent}  ${run.status}  ${run.description}`);
  if (workflow.error) lines.push(`  error:   ${workflow.error.kind}: ${workflow.error.message}`);
  if (workflow.status === 'completed') lines.push(`  output:  ${JSON.stringify(workflow.output, null, 2).replace(/\n/g, '\n  ')}`);
  return lines;
}
