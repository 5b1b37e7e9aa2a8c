import { describe, expect, it } from 'vitest';
import { ConfigError } from '../errors/config-error.ts';
import {
  exactPattern,
  normalizeArgument,
  parsePermissionRule,
  permissionDecisions,
  permissionRisks,
  ruleMatches,
  specificity,
  type PermissionCall,
  type PermissionDecision,
} from './permission-rule.ts';

const bash = (argument?: string): PermissionCall => ({ tool: 'bash', risk: 'exec', argument });
const readFile = (argument?: string): PermissionCall => ({ tool: 'read_file', risk: 'read', argument });
const writeFile = (argument: string): PermissionCall => ({ tool: 'write_file', risk: 'write', argument });
const fetchUrl = (argument?: string): PermissionCall => ({ tool: 'fetch', risk: 'network', argument });

const matches = (rule: string, call: PermissionCall, decision: PermissionDecision = 'deny') => ruleMatches(parsePermissionRule(rule), call, decision);

function parseError(text: unknown): string {
  try {
    parsePermissionRule(text);
  } catch (error) {
    expect(ConfigError.isInstance(error)).toBe(true);
    return (error as Error).message;
  }
  throw new Error(`${String(text)} parsed`);
}

describe('ruleMatches', () => {
  it('matches a risk rule to calls of that risk only', () => {
    expect(matches('network', fetchUrl('https://x'))).toBe(true);
    expect(matches('network', readFile('a.md'))).toBe(false);
    expect(matches('network', bash('ls'))).toBe(false);
    expect(matches('read', readFile('a.md'))).toBe(true);
    expect(matches('read', writeFile('a.md'))).toBe(false);
  });

  it('matches a tool rule to calls of that tool only', () => {
    expect(matches('bash', bash('ls'))).toBe(true);
    expect(matches('bash', { tool: 'bash_other', risk: 'exec', argument: 'ls' })).toBe(false);
    expect(matches('read_file', readFile('a.md'))).toBe(true);
    expect(matches('read_file', writeFile('a.md'))).toBe(false);
  });

  it('matches an argument rule to calls of its tool only, whatever the argument', () => {
    expect(matches('bash(npm test*)', bash('npm test'))).toBe(true);
    expect(matches('bash(npm test*)', { tool: 'sh', risk: 'exec', argument: 'npm test' })).toBe(false);
    expect(matches('bash(npm test*)', { tool: 'sh', risk: 'exec', argument: 'npm test' }, 'allow')).toBe(false);
    expect(matches('read_file(*)', writeFile('a.md'))).toBe(false);
  });

  it('never matches an argument rule to a call without an argument', () => {
    expect(matches('bash(*)', bash())).toBe(false);
    expect(matches('fetch(*)', fetchUrl())).toBe(false);
  });

  it('anchors a pattern at both ends, and a star matches any text, new lines included', () => {
    expect(matches('bash(npm test)', bash('npm test'))).toBe(true);
    expect(matches('bash(npm test)', bash('npm test --watch'))).toBe(false);
    expect(matches('bash(npm test)', bash('run npm test'))).toBe(false);
    expect(matches('bash(echo *)', bash('echo a\nb'))).toBe(true);
    expect(matches('bash(*test)', bash('npm test'))).toBe(true);
  });

  it('takes every other character of a pattern literally', () => {
    expect(matches('bash(ls a.b)', bash('ls axb'))).toBe(false);
    expect(matches('bash(ls a.b)', bash('ls a.b'))).toBe(true);
    for (const special of ['^', '$', '|', '?', '+', '(', '[', ']', '{', '}']) {
      expect(matches(`fetch(a${special}b*)`, fetchUrl(`a${special}b/c`))).toBe(true);
      expect(matches(`fetch(a${special}b*)`, fetchUrl('ab/c'))).toBe(false);
    }
    expect(matches('fetch(a)b*)', fetchUrl('a)b'))).toBe(true);
    expect(matches('fetch(a\\b)', fetchUrl('a\\b'))).toBe(true);
  });

  it('reads \\* as a star and \\\\ as a backslash', () => {
    expect(matches('bash(rm \\*)', bash('rm *'))).toBe(true);
    expect(matches('bash(rm \\*)', bash('rm -rf /'))).toBe(false);
    expect(matches('fetch(a\\\\*)', fetchUrl('a\\'))).toBe(true);
    expect(matches('fetch(a\\\\*)', fetchUrl('a\\xyz'))).toBe(true);
    expect(matches('fetch(a\\\\*)', fetchUrl('ab'))).toBe(false);
    expect(matches('fetch(a\\\\\\*)', fetchUrl('a\\*'))).toBe(true);
    expect(matches('fetch(a\\\\\\*)', fetchUrl('a\\x'))).toBe(false);
  });

  it('compares the paths of read and write tools in normal form, for reads as for writes', () => {
    expect(matches('read_file(docs/*)', readFile('docs/guide.md'))).toBe(true);
    expect(matches('read_file(docs/*)', readFile('./docs/guide.md'))).toBe(true);
    expect(matches('read_file(docs/*)', readFile('docs/../.env'))).toBe(false);
    expect(matches('read_file(docs/*)', readFile('docs/./a/../../.env'))).toBe(false);
    expect(matches('write_file(docs/*)', writeFile('docs/../.env'))).toBe(false);
    expect(matches('write_file(docs/*)', writeFile('  docs/a.md  '))).toBe(true);
    // The pattern is a path too.
    expect(matches('read_file(./docs/*)', readFile('docs/a.md'))).toBe(true);
    expect(matches('write_file(./docs/*)', writeFile('docs/a.md'))).toBe(true);
    expect(matches('read_file(docs/x/../*)', readFile('docs/a.md'))).toBe(true);
  });

  it('compares other arguments as written (trimmed), not as paths', () => {
    expect(matches('bash(./x/*)', bash('./x/y'))).toBe(true);
    expect(matches('bash(./x/*)', bash('x/y'))).toBe(false);
    expect(matches('bash( ls x )', bash('ls x'))).toBe(true);
    expect(matches('fetch(https://a/*)', fetchUrl('  https://a/b/../c  '))).toBe(true);
    expect(matches('fetch(https://a/b/*)', fetchUrl('https://a/b/../c'))).toBe(true);
  });

  it('does not let an allow pattern match a command that chains, redirects or climbs out', () => {
    for (const command of [
      'npm test; rm x',
      'npm test && rm x',
      'npm test | sh',
      'npm test `id`',
      'npm test > out',
      'npm test < in',
      'npm test\nrm x',
      'npm test\rrm x',
      'npm test $(id)',
    ]) {
      expect(matches('bash(npm test*)', bash(command), 'allow'), command).toBe(false);
      // Deny and ask rules still match it: that only makes a call stricter.
      expect(matches('bash(npm test*)', bash(command), 'deny'), command).toBe(true);
      expect(matches('bash(npm test*)', bash(command), 'ask'), command).toBe(true);
    }
    for (const command of ['cat docs/..', 'cat docs/../x', 'cat .. ', 'cat --file=../x', 'cat docs/.. x']) {
      expect(matches('bash(cat *)', bash(command), 'allow'), command).toBe(false);
    }
    expect(matches('bash(cat *)', bash('..'), 'allow')).toBe(false);
    expect(matches('bash(*)', bash('../x'), 'allow')).toBe(false);
    // Dots that are not a parent segment, and a $ without a parenthesis, are fine.
    for (const command of ['cat ..hidden', 'cat a..b', 'cat docs/...', 'cat $HOME']) {
      expect(matches('bash(cat *)', bash(command), 'allow'), command).toBe(true);
    }
  });

  it('lets an allow pattern that has the operator itself match it, and confines only commands', () => {
    expect(matches('bash(npm test; *)', bash('npm test; rm x'), 'allow')).toBe(true);
    expect(matches('bash(ls ../*)', bash('ls ../x'), 'allow')).toBe(true);
    expect(matches('fetch(*)', fetchUrl('https://x?a=1&b=2'), 'allow')).toBe(true);
    expect(matches('write_file(*)', writeFile('a;b'), 'allow')).toBe(true);
  });

  it('matches as a deny rule when no decision is given', () => {
    expect(ruleMatches(parsePermissionRule('bash(npm test*)'), bash('npm test; rm x'))).toBe(true);
  });
});

describe('normalizeArgument', () => {
  it('normalizes read and write paths and trims everything else', () => {
    expect(normalizeArgument(' ./docs/../src/a.ts ', 'read')).toBe('src/a.ts');
    expect(normalizeArgument('.//docs/a.md', 'write')).toBe('docs/a.md');
    expect(normalizeArgument('./a.md', 'write')).toBe('a.md');
    expect(normalizeArgument('docs//a.md', 'read')).toBe('docs/a.md');
    expect(normalizeArgument(' ./docs/../x ', 'exec')).toBe('./docs/../x');
    expect(normalizeArgument(' https://a/./b ', 'network')).toBe('https://a/./b');
    // A path with a line break is not normalized: it is no path of a real file.
    expect(normalizeArgument('docs/a\n/../b', 'write')).toBe('docs/a\n/../b');
    expect(normalizeArgument('docs/a\r/../b', 'read')).toBe('docs/a\r/../b');
    expect(normalizeArgument('.//docs/a\n/../b', 'read')).toBe('docs/a\n/../b');
    expect(normalizeArgument('notes.md', 'read')).toBe('notes.md');
  });
});

describe('parsePermissionRule', () => {
  it('parses risks, tools and tools with argument patterns, trimmed', () => {
    for (const risk of ['read', 'write', 'exec', 'network']) expect(parsePermissionRule(` ${risk} `)).toEqual({ text: risk, kind: 'risk', risk });
    expect(parsePermissionRule(' bash ')).toEqual({ text: 'bash', kind: 'tool', tool: 'bash' });
    expect(parsePermissionRule('mcp__a.b-c_9')).toEqual({ text: 'mcp__a.b-c_9', kind: 'tool', tool: 'mcp__a.b-c_9' });
    expect(parsePermissionRule('_x')).toMatchObject({ kind: 'tool', tool: '_x' });
    expect(parsePermissionRule(' bash(git diff*) ')).toMatchObject({ text: 'bash(git diff*)', kind: 'argument', tool: 'bash', pattern: 'git diff*' });
  });

  it('refuses what is not text, saying what a rule looks like', () => {
    expect(parseError(3)).toBe(
      'Permission rule 3 must be text: a risk (read, write, exec, network), a tool name (bash) or a tool with an argument pattern (bash(npm test*), write_file(docs/*)).',
    );
    expect(parseError(undefined)).toMatch(/^Permission rule undefined must be text: /);
    expect(parseError({ a: 1 })).toMatch(/^Permission rule \{"a":1\} must be text: /);
  });

  it('refuses malformed rules, naming them', () => {
    for (const text of ['1bash', 'bash!', 'two words', '(npm test)', 'bash(x', 'ba sh(x)', '9x(y)', 'bash)x(']) {
      expect(parseError(text)).toBe(
        `Invalid permission rule '${text}': a rule is a risk (read, write, exec, network), a tool name (bash) or a tool with an argument pattern (bash(npm test*), write_file(docs/*)).`,
      );
    }
  });

  it('refuses an empty argument pattern and a pattern on a risk', () => {
    expect(parseError('bash( )')).toBe(
      "Permission rule 'bash( )' has an empty argument pattern: write 'bash' for every call, or a pattern like bash(npm test*).",
    );
    expect(parseError('bash()')).toMatch(/has an empty argument pattern/);
    expect(parseError('write(docs/*)')).toBe(
      "Permission rule 'write(docs/*)': 'write' is a risk, and a risk takes no argument pattern; name a tool, like bash(npm test*).",
    );
  });
});

describe('permissionRisks and permissionDecisions', () => {
  it('lists risks and decisions from the least to the most dangerous or strict', () => {
    expect(permissionRisks).toEqual(['read', 'write', 'exec', 'network']);
    expect(permissionDecisions).toEqual(['allow', 'ask', 'deny']);
  });
});

describe('specificity and exactPattern', () => {
  it('ranks argument rules over tool rules over risk rules', () => {
    expect(specificity(parsePermissionRule('bash(ls)'))).toBe(3);
    expect(specificity(parsePermissionRule('bash'))).toBe(2);
    expect(specificity(parsePermissionRule('exec'))).toBe(1);
  });

  it('escapes stars and backslashes, and nothing else', () => {
    expect(exactPattern('rm * \\x a.b')).toBe('rm \\* \\\\x a.b');
    expect(matches(`bash(${exactPattern('rm * \\x')})`, bash('rm * \\x'))).toBe(true);
    expect(matches(`bash(${exactPattern('rm *')})`, bash('rm -rf'))).toBe(false);
  });
});

describe('rules on delegation (agent, agent(NAME), agent(model:PATTERN))', () => {
  const delegation = (agent: string, model = 'openai:gpt-5'): PermissionCall => ({ tool: 'agent', risk: 'exec', argument: agent, model });

  it('parses agent(NAME) as a glob over the agent name and agent(model:PATTERN) over the model spec', () => {
    expect(parsePermissionRule('agent(review-*)')).toMatchObject({ kind: 'agent', target: 'name', pattern: 'review-*', exact: false, text: 'agent(review-*)' });
    expect(parsePermissionRule('agent(reviewer)')).toMatchObject({ kind: 'agent', target: 'name', exact: true });
    expect(parsePermissionRule('agent(model:openai:*)')).toMatchObject({ kind: 'agent', target: 'model', pattern: 'openai:*', exact: false });
    expect(parsePermissionRule('agent')).toMatchObject({ kind: 'tool', tool: 'agent' });
  });

  it("reads Claude Code's Agent(...) and Task(...) the same, keeping the rule as written", () => {
    expect(parsePermissionRule('Agent(review-*)')).toMatchObject({ kind: 'agent', target: 'name', pattern: 'review-*', text: 'Agent(review-*)' });
    expect(parsePermissionRule('Task(model:anthropic:*)')).toMatchObject({ kind: 'agent', target: 'model', text: 'Task(model:anthropic:*)' });
    expect(parsePermissionRule('Task')).toMatchObject({ kind: 'tool', tool: 'agent', text: 'Task' });
    expect(matches('Task(explore)', delegation('explore'))).toBe(true);
    expect(matches('Agent', delegation('anything'))).toBe(true);
  });

  it('matches names by glob, whole name only', () => {
    expect(matches('agent(review-*)', delegation('review-security'))).toBe(true);
    expect(matches('agent(review-*)', delegation('reviewer'))).toBe(false);
    expect(matches('agent(review-*)', delegation('my-review-x'))).toBe(false);
    expect(matches('agent(reviewer)', delegation('reviewer'))).toBe(true);
    expect(matches('agent(reviewer)', delegation('reviewer2'))).toBe(false);
  });

  it('matches models against provider:model-id, or the model id when the pattern names no provider', () => {
    expect(matches('agent(model:openai:*)', delegation('x', 'openai:gpt-5'))).toBe(true);
    expect(matches('agent(model:openai:*)', delegation('x', 'anthropic:claude-opus-4'))).toBe(false);
    expect(matches('agent(model:claude-opus-*)', delegation('x', 'anthropic:claude-opus-4'))).toBe(true);
    expect(matches('agent(model:*opus*)', delegation('x', 'anthropic:claude-opus-4'))).toBe(true);
    expect(matches('agent(model:anthropic:claude-opus-4)', delegation('x', 'anthropic:claude-opus-4'))).toBe(true);
    // A model pattern never matches a name, nor a name pattern a model.
    expect(matches('agent(model:reviewer)', delegation('reviewer', 'openai:gpt-5'))).toBe(false);
    expect(matches('agent(gpt-5)', delegation('reviewer', 'openai:gpt-5'))).toBe(false);
  });

  it('applies to delegations only', () => {
    expect(matches('agent(*)', bash('ls'))).toBe(false);
    expect(matches('agent', bash('ls'))).toBe(false);
  });

  it('rates a named agent or model above a glob, and a glob above the bare tool', () => {
    expect(specificity(parsePermissionRule('agent(reviewer)'))).toBeGreaterThan(specificity(parsePermissionRule('agent(review*)')));
    expect(specificity(parsePermissionRule('agent(model:openai:*)'))).toBeGreaterThan(specificity(parsePermissionRule('agent')));
    expect(specificity(parsePermissionRule('agent(review\\*)'))).toBe(specificity(parsePermissionRule('agent(reviewer)')));
  });

  it('refuses an empty name or model with what to write', () => {
    expect(parseError('agent()')).toMatch(/empty argument pattern|names no agent/);
    expect(parseError('agent(model:)')).toMatch(/names no model: .*agent\(model:openai:\*\)/);
    expect(parseError('Task(model:  )')).toMatch(/names no model/);
  });
});
