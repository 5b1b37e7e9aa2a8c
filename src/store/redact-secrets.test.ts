import { describe, expect, it } from 'vitest';
import { redactSecrets, redactSecretsDeep } from './redact-secrets.ts';

describe('redactSecrets', () => {
  it.each([
    ['OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz012345', 'OPENAI_API_KEY=[REDACTED]'],
    ['key: sk-ant-api03-abcdefghijklmnopqrstuvwxyz', 'key: [REDACTED]'],
    ['Authorization: Bearer abcdefghijklmnop.qrstuv', 'Authorization: [REDACTED]'],
    ['{"authorization": "Basic dXNlcjpwYXNzd29yZA=="}', '{"authorization": "[REDACTED]"}'],
    ['curl -H "x: y" token Bearer abcdefghijklmnopqrstu', 'curl -H "x: y" token Bearer [REDACTED]'],
    ['export GITHUB_TOKEN="ghp_abcdefghijklmnopqrstuvwxyz0123456789"', 'export GITHUB_TOKEN="[REDACTED]"'],
    ['aws AKIAABCDEFGHIJKLMNOP here', 'aws [REDACTED] here'],
    ['{"api_key": "abc123def456"}', '{"api_key": "[REDACTED]"}'],
    ['postgres://cadre:hunter2@db/cadre', 'postgres://cadre:[REDACTED]@db/cadre'],
    ['-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----', '[REDACTED PRIVATE KEY]'],
    // Each hint alone, in the case its pattern matches.
    ['slack xoxb-1234567890-abcdefghij', 'slack [REDACTED]'],
    ['maps AIzaSyA1234567890abcdefghijklmnopqrstuv', 'maps [REDACTED]'],
    ['AUTHORIZATION = abcdefghijkl', 'AUTHORIZATION = [REDACTED]'],
    ['{"Client_Secret": "abcdef123456"}', '{"Client_Secret": "[REDACTED]"}'],
    ["PassWord: 'hunter2hunter2'", "PassWord: '[REDACTED]'"],
    ['Access-Token = "abcdef123456"', 'Access-Token = "[REDACTED]"'],
  ])('hides %s', (input, expected) => {
    expect(redactSecrets(input)).toBe(expected);
  });

  it.each([
    'const password: string = input;',
    'read_file src/store/token-bucket.ts',
    'The run used 1,234 input tokens.',
    'https://example.com/path?page=2',
    'task-1234567890-abcdefghij',
  ])('leaves ordinary text alone: %s', (text) => {
    expect(redactSecrets(text)).toBe(text);
  });

  it('copies nested values with every string redacted and the rest untouched', () => {
    const value = { a: ['sk-abcdefghijklmnopqrstuvwxyz', 3, null], b: { c: true, d: 'fine' } };
    expect(redactSecretsDeep(value)).toEqual({ a: ['[REDACTED]', 3, null], b: { c: true, d: 'fine' } });
    expect(value.a[0]).toBe('sk-abcdefghijklmnopqrstuvwxyz');
  });
});
