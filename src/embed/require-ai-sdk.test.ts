import * as ai from 'ai';
import { describe, expect, it } from 'vitest';
import { aiSdkProblem, requireAiSdk7 } from './require-ai-sdk.ts';

describe('the AI SDK major check', () => {
  it('accepts the installed AI SDK 7', () => {
    expect(() => requireAiSdk7('cadre.tools')).not.toThrow();
    expect(aiSdkProblem(ai as Record<string, unknown>, () => '7.0.173')).toBeNull();
  });

  it('names the version an app on AI SDK 6 has and how to upgrade', () => {
    const six = { generateText() {}, streamText() {}, stepCountIs() {}, tool() {} };
    expect(aiSdkProblem(six, () => '6.0.326')).toBe("needs AI SDK 7 (the 'ai' package 7.x); this app has 'ai' 6.0.326. Upgrade with: npm install ai@^7");
    expect(aiSdkProblem(six, () => null)).toContain("this app has 'ai' of an older major");
  });
});
