/**
 * The colours agent files name (Claude Code's `red`, `orange`, `yellow`, `green`, `cyan`,
 * `blue`, `purple`, `pink`, and a few more), as `#rrggbb` for the dashboard and as the nearest
 * ANSI colour for terminals.
 */
const namedColors: Readonly<Record<string, { hex: string; ansi: AnsiColor }>> = {
  red: { hex: '#e5484d', ansi: 'red' },
  orange: { hex: '#f76b15', ansi: 'yellowBright' },
  yellow: { hex: '#e2a336', ansi: 'yellow' },
  green: { hex: '#30a46c', ansi: 'green' },
  cyan: { hex: '#0797b9', ansi: 'cyan' },
  teal: { hex: '#12a594', ansi: 'cyan' },
  blue: { hex: '#0090ff', ansi: 'blue' },
  purple: { hex: '#8e4ec6', ansi: 'magenta' },
  violet: { hex: '#6e56cf', ansi: 'magenta' },
  magenta: { hex: '#c2298a', ansi: 'magenta' },
  pink: { hex: '#d6409f', ansi: 'magentaBright' },
  gray: { hex: '#8b8d98', ansi: 'gray' },
  grey: { hex: '#8b8d98', ansi: 'gray' },
};

/** The ANSI colours `node:util`'s `styleText` knows that agent colours map to. */
export type AnsiColor = 'red' | 'yellow' | 'yellowBright' | 'green' | 'cyan' | 'blue' | 'magenta' | 'magentaBright' | 'gray';

/** An agent's colour, resolved: what a terminal and a web page each show. */
export interface AgentColor {
  /** `#rrggbb`. */
  hex: string;
  /** The nearest ANSI colour, or null for a `#rrggbb` colour (shown in 24-bit colour). */
  ansi: AnsiColor | null;
}

/**
 * The colour an agent's `color` stands for: a name above (case-insensitive) or `#rgb` /
 * `#rrggbb`; null for none or anything else, which is shown uncoloured.
 * @example resolveAgentColor('purple') // { hex: '#8e4ec6', ansi: 'magenta' }
 */
export function resolveAgentColor(color: string | undefined): AgentColor | null {
  if (color === undefined) return null;
  const text = color.trim().toLowerCase();
  if (Object.hasOwn(namedColors, text)) return namedColors[text];
  const short = /^#([0-9a-f])([0-9a-f])([0-9a-f])$/.exec(text);
  if (short) return { hex: `#${short[1]}${short[1]}${short[2]}${short[2]}${short[3]}${short[3]}`, ansi: null };
  return /^#[0-9a-f]{6}$/.test(text) ? { hex: text, ansi: null } : null;
}
