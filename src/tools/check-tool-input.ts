import { isPromiseLike, type ToolMiddleware } from '../loop/tool-pipeline.ts';
import { toolInfo } from './define-tool.ts';

/**
 * The tool pipeline's input check, for tools made by `defineTool`: the input is checked against
 * the tool's schema once (a bad one is refused with a `ToolInputError` saying what to fix, before
 * any rule or person is consulted), then the tool's own `check` (a path outside the workspace),
 * and the tool runs on the checked value without parsing it again. Later entries see the checked
 * input (`call.checked`). Synchronous unless the tool's own check waits.
 */
export const checkToolInput: ToolMiddleware = {
  name: 'check-input',
  appliesTo: ({ tool }) => toolInfo(tool) !== undefined,
  handle(call, next) {
    const info = toolInfo(call.tool)!;
    call.input = info.parse(call.input);
    call.checked = true;
    call.execute = info.executeParsed;
    const checking = info.checkParsed(call.input);
    return isPromiseLike(checking) ? Promise.resolve(checking).then(() => next()) : next();
  },
};
