import type { ModelMiddleware } from './compose-model.ts';

/**
 * The model stack's text entry: calls `onText` with the text of each whole (not streamed)
 * response as soon as the model has answered, before the step's tool calls run (as a stream
 * would show it). Streamed calls pass untouched: their text arrives as stream parts.
 * @example composeModel(model, [watchModelText((text) => showActivity(text))])
 */
export function watchModelText(onText: (text: string) => void): ModelMiddleware {
  return {
    // Every model version the SDK accepts (v2 to v4) answers doGenerate with a content array.
    wrapGenerate: ({ doGenerate }) =>
      doGenerate().then((result) => {
        let text = '';
        for (const part of result.content) if (part.type === 'text') text += part.text ?? '';
        onText(text);
        return result;
      }),
  };
}
