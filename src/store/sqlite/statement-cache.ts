import type { DatabaseSync, StatementSync } from 'node:sqlite';

/**
 * Prepared statements by SQL text. Preparing costs about as much as running a small
 * statement, and patches and queries come in a handful of shapes, so each is prepared once.
 * Bounded so that unusual shapes cannot grow it without end.
 */
export function createStatementCache(
  database: DatabaseSync,
  maxSize = 500,
): (sql: string, options?: { returnArrays?: boolean }) => StatementSync {
  const statements = new Map<string, StatementSync>();
  return function prepared(sql, { returnArrays = false } = {}) {
    const key = returnArrays ? `arrays:${sql}` : sql;
    let statement = statements.get(key);
    if (statement === undefined) {
      statement = database.prepare(sql);
      statement.setReturnArrays(returnArrays);
      if (statements.size >= maxSize) statements.delete(statements.keys().next().value as string);
      statements.set(key, statement);
    }
    return statement;
  };
}
