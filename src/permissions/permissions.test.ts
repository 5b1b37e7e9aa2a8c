import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../errors/config-error.ts';
import { exactPattern, parsePermissionRule, type PermissionCall, type PermissionDecision, type PermissionRisk } from './permission-rule.ts';
import {
  callOfAsk,
  compilePermissions,
  decideDelegation,
  decidePermission,
  matchRules,
  stricter,
  type DecidedRule,
  type PermissionsConfig,
} from './permissions.ts';

const bash = (argument: string): PermissionCall => ({ tool: 'bash', risk: 'exec', argument });
const write = (argument: string): PermissionCall => ({ tool: 'write_file', risk: 'write', argument });
const read: PermissionCall = { tool: 'read_file', risk: 'read', argument: 'src/a.ts' };
const fetchCall: PermissionCall = { tool: 'mcp__web__fetch', risk: 'network' };

function decide(config: PermissionsConfig, call: PermissionCall, agent?: PermissionsConfig, session?: PermissionsConfig): PermissionDecision {
  return decidePermission(
    {
      rules: compilePermissions(config, 'test'),
      agentRules: agent && compilePermissions(agent, 'agent'),
      sessionRules: session && compilePermissions(session, 'session'),
    },
    call,
  ).decision;
}

describe('decidePermission', () => {
  it.each<[string, PermissionsConfig, PermissionCall, PermissionDecision]>([
    ['reads are allowed by default', {}, read, 'allow'],
    ['writes ask by default', {}, write('a.md'), 'ask'],
    ['commands ask by default', {}, bash('ls'), 'ask'],
    ['network tools ask by default', {}, fetchCall, 'ask'],
    ['a risk rule replaces the default', { allow: ['write'] }, write('a.md'), 'allow'],
    ['a tool rule beats a risk rule', { deny: ['exec'], allow: ['bash'] }, bash('ls'), 'allow'],
    ['an argument rule beats a tool rule', { deny: ['bash'], allow: ['bash(npm test*)'] }, bash('npm test -- --watch'), 'allow'],
    ['an argument rule that does not match leaves the tool rule', { deny: ['bash'], allow: ['bash(npm test*)'] }, bash('npm publish'), 'deny'],
    ['a pattern is anchored at both ends', { allow: ['bash(npm test)'] }, bash('npm test --watch'), 'ask'],
    ['a star matches slashes in paths', { allow: ['write_file(docs/*)'] }, write('docs/guide/intro.md'), 'allow'],
    ['a ./ prefix is the same path', { allow: ['write_file(docs/*)'] }, write('./docs/a.md'), 'allow'],
    ['a .. detour out of the folder does not match', { allow: ['write_file(docs/*)'] }, write('docs/../src/index.ts'), 'ask'],
    ['an allowed command does not allow a chained one', { allow: ['bash(npm test*)'] }, bash('npm test; rm -rf ~'), 'ask'],
    ['nor a piped or substituted one', { allow: ['bash(npm test*)'] }, bash('npm test $(curl evil)'), 'ask'],
    ['a deny pattern still matches a chained command', { allow: ['bash'], deny: ['bash(rm *)'] }, bash('rm -rf x && ls'), 'deny'],
    ['deny beats allow at equal specificity', { allow: ['bash'], deny: ['bash'] }, bash('ls'), 'deny'],
    ['ask beats allow at equal specificity', { allow: ['write'], ask: ['write'] }, write('a.md'), 'ask'],
    ['a rule for another tool does not match', { deny: ['write_file'] }, bash('ls'), 'ask'],
    ['an argument rule does not match a call without argument', { allow: ['mcp__web__fetch(x*)'] }, fetchCall, 'ask'],
    ['reads can be denied', { deny: ['read'] }, read, 'deny'],
    ['a command is compared as written, not as a path', { allow: ['bash(curl http://example.com/*)'] }, bash('curl http://example.com/a'), 'allow'],
    ['an allowed command does not climb out with ..', { allow: ['bash(cat docs/*)'] }, bash('cat docs/../../etc/passwd'), 'ask'],
    ['a .. in the pattern allows one in the command', { allow: ['bash(ls ../*)'] }, bash('ls ../shared'), 'allow'],
    ['an escaped star is only a star', { allow: ['bash(rm \\*)'] }, bash('rm -rf /'), 'ask'],
    ['an escaped star matches a star', { allow: ['bash(rm \\*)'] }, bash('rm *'), 'allow'],
  ])('%s', (_name, config, call, expected) => {
    expect(decide(config, call)).toBe(expected);
  });

  it("lets an agent's rules narrow, never widen", () => {
    expect(decide({ allow: ['write'] }, write('a.md'), { deny: ['write_file'] })).toBe('deny');
    expect(decide({ allow: ['bash'] }, bash('ls'), { ask: ['exec'] })).toBe('ask');
    expect(decide({}, write('a.md'), { allow: ['write'] })).toBe('ask');
    expect(decide({ deny: ['bash'] }, bash('ls'), { allow: ['bash(ls)'] })).toBe('deny');
    expect(decide({ allow: ['write'] }, write('docs/a.md'), { deny: ['write'], allow: ['write_file(docs/*)'] })).toBe('allow');
    expect(decide({ allow: ['write'] }, write('src/a.ts'), { deny: ['write'], allow: ['write_file(docs/*)'] })).toBe('deny');
  });

  it("answers only asks with a person's session rules", () => {
    expect(decide({}, bash('npm test'), undefined, { allow: ['bash(npm test)'] })).toBe('allow');
    expect(decide({}, bash('npm test'), undefined, { deny: ['bash(npm test)'] })).toBe('deny');
    expect(decide({ deny: ['bash'] }, bash('npm test'), undefined, { allow: ['bash(npm test)'] })).toBe('deny');
    expect(decide({}, bash('npm run x'), undefined, { allow: ['bash(npm test)'] })).toBe('ask');
  });

  it('lets the first of equally specific rules with the same decision decide', () => {
    const rules = compilePermissions({ allow: ['bash(npm*)', 'bash(npm test*)'] }, 'test');
    expect(decidePermission({ rules }, bash('npm test'))).toEqual({ decision: 'allow', rule: 'bash(npm*)' });
  });

  it("keeps the configuration's rule when the agent's says the same", () => {
    const rules = compilePermissions({ allow: ['bash'] }, 'test');
    expect(decidePermission({ rules, agentRules: compilePermissions({ allow: ['bash(ls)'] }, 'agent') }, bash('ls'))).toEqual({
      decision: 'allow',
      rule: 'bash',
    });
    expect(decidePermission({ rules, agentRules: compilePermissions({ ask: ['bash(ls)'] }, 'agent') }, bash('ls'))).toEqual({
      decision: 'ask',
      rule: 'bash(ls)',
    });
  });

  it('names the rule that decided, or none for a default', () => {
    const rules = compilePermissions({ allow: ['bash(npm test*)'] }, 'test');
    expect(decidePermission({ rules }, bash('npm test'))).toEqual({ decision: 'allow', rule: 'bash(npm test*)' });
    expect(decidePermission({ rules }, bash('ls'))).toEqual({ decision: 'ask', rule: null });
  });
});

describe('stricter', () => {
  it('is the stricter of two decisions, in either order', () => {
    const decisions: PermissionDecision[] = ['allow', 'ask', 'deny'];
    for (const [i, a] of decisions.entries()) for (const [j, b] of decisions.entries()) expect(stricter(a, b)).toBe(decisions[Math.max(i, j)]);
  });
});

describe('exactPattern', () => {
  it('makes a rule that matches its argument and nothing else', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 30 }).filter((text) => text.trim() !== '' && !text.includes(')')),
        fc.string({ minLength: 1, maxLength: 5 }).filter((text) => text.trim() !== ''),
        (argument, extra) => {
          const rules = compilePermissions({ allow: [`bash(${exactPattern(argument)})`] }, 'test');
          expect(decidePermission({ rules }, { tool: 'bash', risk: 'read', argument }).decision).toBe('allow');
          expect(decidePermission({ rules }, { tool: 'bash', risk: 'exec', argument: `${argument.trim()}${extra}x` }).decision).toBe('ask');
        },
      ),
    );
  });
});

describe('parsePermissionRule and compilePermissions', () => {
  it.each([
    ['', "Invalid permission rule ''"],
    ['   ', "Invalid permission rule '   '"],
    ['bash(', "Invalid permission rule 'bash('"],
    ['bash()', "Permission rule 'bash()' has an empty argument pattern"],
    ['(npm)', "Invalid permission rule '(npm)'"],
    ['write(docs/*)', "Permission rule 'write(docs/*)': 'write' is a risk"],
    ['two words', "Invalid permission rule 'two words'"],
    ['bash(x', "Invalid permission rule 'bash(x'"],
    ['bash)x(', "Invalid permission rule 'bash)x('"],
  ])('refuses %j with a config error naming it', (text, message) => {
    const caught = (() => {
      try {
        parsePermissionRule(text);
      } catch (error) {
        return error;
      }
    })();
    expect(ConfigError.isInstance(caught)).toBe(true);
    expect((caught as Error).message.startsWith(message)).toBe(true);
  });

  it('compiles no rules from no permissions, and keeps each list in order under its decision', () => {
    expect(compilePermissions(undefined, 'test')).toEqual([]);
    expect(compilePermissions({ deny: ['network', 'bash(rm *)'], allow: ['read'] }, 'test').map(({ rule, decision }) => [decision, rule.text])).toEqual([
      ['allow', 'read'],
      ['deny', 'network'],
      ['deny', 'bash(rm *)'],
    ]);
  });

  it('refuses permissions that are not an object, saying what they look like', () => {
    expect(() => compilePermissions('bash' as unknown as PermissionsConfig, 'cadre.config.json')).toThrow(
      'cadre.config.json: permissions: must be an object like { "allow": ["bash(npm test*)"], "deny": ["network"] }',
    );
  });

  it("keeps the rule's own error as the cause", () => {
    const caught = (() => {
      try {
        compilePermissions({ ask: ['bash()'] }, 'agent coder');
      } catch (error) {
        return error as Error;
      }
    })();
    expect(caught?.message).toBe(
      "agent coder: permissions.ask: Permission rule 'bash()' has an empty argument pattern: write 'bash' for every call, or a pattern like bash(npm test*).",
    );
    expect(ConfigError.isInstance(caught?.cause)).toBe(true);
  });

  it('refuses a rule that is not text, an unknown key and a bad list, naming where', () => {
    expect(() => compilePermissions({ allow: [3 as unknown as string] }, 'cadre.config.json')).toThrow(
      /cadre.config.json: permissions.allow.0: must be a rule as text/,
    );
    expect(() => compilePermissions({ alow: ['bash'] } as PermissionsConfig, 'cadre.config.json')).toThrow(
      /permissions.alow: unknown key \(known keys: allow, ask, deny\)/,
    );
    expect(() => compilePermissions({ deny: 'bash' as unknown as string[] }, '--deny')).toThrow(/--deny: permissions.deny: must be a list of rules/);
    expect(() => compilePermissions({ deny: ['bash(rm *)', 'nope nope'] }, 'agent coder')).toThrow(
      /agent coder: permissions.deny: Invalid permission rule 'nope nope'/,
    );
  });

  it('parses the three kinds of rule', () => {
    expect(parsePermissionRule('exec')).toMatchObject({ kind: 'risk', risk: 'exec' });
    expect(parsePermissionRule('mcp__github__create_issue')).toMatchObject({ kind: 'tool', tool: 'mcp__github__create_issue' });
    expect(parsePermissionRule(' bash(git diff*) ')).toMatchObject({ kind: 'argument', tool: 'bash', pattern: 'git diff*' });
  });
});

describe('deny at equal specificity', () => {
  const risks: PermissionRisk[] = ['read', 'write', 'exec', 'network'];
  const tools = ['bash', 'write_file', 'edit_file', 'read_file', 'mcp__x__y', 'other_tool'];
  const call = fc.record({
    tool: fc.constantFrom(...tools.slice(0, 5)),
    risk: fc.constantFrom(...risks),
    argument: fc.option(fc.string({ maxLength: 20 }), { nil: undefined }),
  });
  const decision = fc.constantFrom<PermissionDecision>('allow', 'ask', 'deny');
  const level = fc.constantFrom('risk', 'tool', 'argument');
  const rank = { risk: 1, tool: 2, argument: 3 };
  const noiseRule = fc.record({
    kind: level,
    decision,
    risk: fc.constantFrom(...risks),
    tool: fc.constantFrom(...tools),
    pattern: fc.stringMatching(/^[a-z ./*-]{0,6}[a-z*]$/),
  });

  it('always wins, whatever other rules there are and in whatever order', () => {
    // An argument rule needs a call with an argument.
    const callAndLevel = fc.tuple(call, level).filter(([theCall, at]) => at !== 'argument' || theCall.argument !== undefined);
    fc.assert(
      fc.property(
        callAndLevel,
        fc.array(noiseRule, { maxLength: 8, size: 'max' }),
        fc.array(fc.nat(), { minLength: 10, maxLength: 10 }),
        ([theCall, at], others, order) => {
          // A deny rule that matches the call at `at`, and an allow rule of the same specificity.
          const text = at === 'risk' ? theCall.risk : at === 'tool' ? theCall.tool : `${theCall.tool}(*)`;
          const matching: DecidedRule[] = [
            { rule: parsePermissionRule(text), decision: 'deny' },
            { rule: parsePermissionRule(text), decision: 'allow' },
          ];
          // Noise is never more specific than `at`, so the deny must decide.
          const noise: DecidedRule[] = others
            .filter((other) => rank[other.kind as keyof typeof rank] <= rank[at as keyof typeof rank])
            .map((other) => {
              const noiseText = other.kind === 'risk' ? other.risk : other.kind === 'tool' ? other.tool : `${other.tool}(${other.pattern})`;
              return { rule: parsePermissionRule(noiseText), decision: other.decision };
            });
          const rules = [...matching, ...noise]
            .map((rule, index) => ({ rule, key: order[index % order.length] * 100 + index }))
            .sort((a, b) => a.key - b.key)
            .map(({ rule }) => rule);
          expect(decidePermission({ rules }, theCall).decision).toBe('deny');
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('decideDelegation', () => {
  const decide = (config: PermissionsConfig, agent: string, model = 'openai:gpt-5', agentConfig?: PermissionsConfig, session?: PermissionsConfig) =>
    decideDelegation(
      {
        rules: compilePermissions(config, 'config'),
        agentRules: agentConfig && compilePermissions(agentConfig, 'agent'),
        sessionRules: session && compilePermissions(session, 'session'),
      },
      { agent, model },
    );

  it('allows a delegation no rule matches, whatever the risk rules say', () => {
    expect(decide({}, 'reviewer')).toEqual({ decision: 'allow', rule: null });
    expect(decide({ deny: ['exec', 'network', 'bash'], ask: ['write'] }, 'reviewer')).toEqual({ decision: 'allow', rule: null });
  });

  it('lets the most specific rule win: a named agent over a glob over the bare tool', () => {
    expect(decide({ deny: ['agent'], allow: ['agent(review-*)'] }, 'review-ui')).toEqual({ decision: 'allow', rule: 'agent(review-*)' });
    expect(decide({ deny: ['agent'], allow: ['agent(review-*)'] }, 'coder')).toEqual({ decision: 'deny', rule: 'agent' });
    expect(decide({ deny: ['agent(review-*)'], ask: ['agent(review-ui)'] }, 'review-ui')).toEqual({ decision: 'ask', rule: 'agent(review-ui)' });
  });

  it('lets deny beat allow at equal specificity, a model rule against a name glob', () => {
    expect(decide({ allow: ['agent(review-*)'], deny: ['agent(model:openai:*)'] }, 'review-ui')).toEqual({ decision: 'deny', rule: 'agent(model:openai:*)' });
    expect(decide({ allow: ['agent(review-*)'], deny: ['agent(model:openai:*)'] }, 'review-ui', 'anthropic:claude-x')).toEqual({
      decision: 'allow',
      rule: 'agent(review-*)',
    });
  });

  it('reads Task(...) and Agent(...) in a configuration as agent(...), quoting them as written', () => {
    expect(decide({ deny: ['Task(model:*opus*)'] }, 'x', 'anthropic:claude-opus-4')).toEqual({ decision: 'deny', rule: 'Task(model:*opus*)' });
    expect(decide({ ask: ['Agent'] }, 'x')).toEqual({ decision: 'ask', rule: 'Agent' });
  });

  it("lets an agent's own rules narrow and never widen", () => {
    expect(decide({}, 'coder', undefined, { deny: ['agent(coder)'] })).toEqual({ decision: 'deny', rule: 'agent(coder)' });
    expect(decide({ ask: ['agent'] }, 'coder', undefined, { allow: ['agent(coder)'] })).toEqual({ decision: 'ask', rule: 'agent' });
  });

  it('answers an ask with a rule a person set for the session', () => {
    expect(decide({ ask: ['agent'] }, 'coder', undefined, undefined, { allow: ['agent(coder)'] })).toEqual({ decision: 'allow', rule: 'agent(coder)' });
    expect(decide({ ask: ['agent'] }, 'x', 'openai:o3', undefined, { deny: ['agent(model:openai:o3)'] })).toEqual({
      decision: 'deny',
      rule: 'agent(model:openai:o3)',
    });
  });
});

describe('callOfAsk', () => {
  it('reads an ask on a delegation model as a model call, so its "always" rule answers the next one', () => {
    const rules = compilePermissions({ allow: ['agent(model:openai:o3)'] }, 'session');
    expect(matchRules(rules, callOfAsk({ tool: 'agent', risk: 'exec', argument: 'model:openai:o3' }))?.decision).toBe('allow');
    expect(callOfAsk({ tool: 'bash', risk: 'exec', argument: 'ls' })).toEqual({ tool: 'bash', risk: 'exec', argument: 'ls' });
  });
});
