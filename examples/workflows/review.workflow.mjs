// A review workflow: every file gets a review at once, then one summary of all findings.
// Run it:    npx cadre workflow run examples/workflows/review.workflow.mjs --input '{"files":["src/index.ts","README.md"]}'
// Kill it (Ctrl-C twice, or kill -9) and go on:  npx cadre workflow resume WF_ID
// Reviews that had finished are not run again; a review that was going is resumed.

/** @param {import('cadre').WorkflowApi} w  @param {{ files: string[] }} input */
export default async function review(w, input) {
  if (!Array.isArray(input?.files) || input.files.length === 0) throw new Error('Give the files to review: --input \'{"files":["a.ts"]}\'');
  w.phase('review');
  const findings = await w.parallel(
    input.files.map((file) => () => w.agent('general', `Review ${file}. List its problems, most serious first, with line numbers.`, { description: `review ${file}` })),
  );
  w.log(`${findings.length} files reviewed`);
  w.phase('summary');
  const summary = await w.agent('general', `Summarize these reviews into one prioritized list:\n\n${findings.map((text, index) => `## ${input.files[index]}\n${text}`).join('\n\n')}`, {
    description: 'summary',
  });
  return { files: input.files, summary };
}
