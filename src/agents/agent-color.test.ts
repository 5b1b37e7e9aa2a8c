import { describe, expect, it } from 'vitest';
import { resolveAgentColor } from './agent-color.ts';

describe('resolveAgentColor', () => {
  it('knows the colours Claude Code agent files use, in any case, and #rgb or #rrggbb', () => {
    expect(resolveAgentColor('purple')).toEqual({ hex: '#8e4ec6', ansi: 'magenta' });
    expect(resolveAgentColor('Cyan')).toMatchObject({ ansi: 'cyan' });
    expect(resolveAgentColor('#0A0')).toEqual({ hex: '#00aa00', ansi: null });
    expect(resolveAgentColor('#123abc')).toEqual({ hex: '#123abc', ansi: null });
  });

  it('shows anything else uncoloured, so no text of a file reaches a style unchecked', () => {
    for (const color of [undefined, '', 'chartreuse-ish', 'red; background: url(x)', '#12345g']) expect(resolveAgentColor(color)).toBeNull();
  });
});
