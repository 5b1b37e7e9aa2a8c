import { agentNamePattern } from './agent-definition.ts';

/**
 * The id an agent name written for people stands for: lowercase words joined by `-`
 * (`Frontend Developer` → `frontend-developer`, `CodeReviewer` → `code-reviewer`); `.`, `_` and
 * `-` stay (`dotnet-framework-4.8-expert`). Null when nothing of it can make an id.
 * @example agentIdFromName('Frontend Developer') // 'frontend-developer'
 */
export function agentIdFromName(name: string): string | null {
  if (agentNamePattern.test(name)) return name;
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    // A lowercase letter or digit followed by a capital starts a new word: CodeReviewer.
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^[^a-z]+/, '')
    .slice(0, 64)
    .replace(/[-._]+$/, '');
  return agentNamePattern.test(slug) ? slug : null;
}
