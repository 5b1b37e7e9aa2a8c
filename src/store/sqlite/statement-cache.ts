import type { DatabaseSync, StatementSync } from 'node:sqlite';

/**
 * Prepared statements by SQL text. Preparing costs about as much as running a small
 * statement, and patches and queries come in a handful of shapes, so each is prepared once.
 * Bounded so that unusual shapes cannot grow it without end.
 */
export function createStatementCache(database: DatabaseSync, maxSize = 500): (sql: string, options?: { returnArrays?: boolean }) => StatementSync {
  // One map per row shape, keyed by the SQL text itself: a derived key would be a new string
  // to hash on every call.
  const objects = new Map<string, StatementSync>();
  const arrays = new Map<string, StatementSync>();
  return function prepared(sql, options) {
    const returnArrays = options?.returnArrays === true;
    const statements = returnArrays ? arrays : objects;
    let statement = statements.get(sql);
    if (statement === undefined) {
      statement = database.prepare(sql);
      statement.setReturnArrays(returnArrays);
      if (statements.size >= maxSize) statements.delete(statements.keys().next().value as string);
      statements.set(sql, statement);
    }
    return statement;
  };
}
