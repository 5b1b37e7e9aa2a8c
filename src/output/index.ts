export { checkOutputSchema, outputValidator, type OutputSchema, type OutputValidator } from './output-schema.ts';
export { OutputSchemaError } from './output-schema-error.ts';
export { createOutputCapture, finalResultToolName, jsonText, type OutputCapture, type OutputVerdict } from './output-capture.ts';
export { toOutputSchema } from './to-output-schema.ts';
