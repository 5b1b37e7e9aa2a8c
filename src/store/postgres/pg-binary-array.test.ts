import { describe, expect, it } from 'vitest';
import { arrayParameterTypes, pgBinaryArray } from './pg-binary-array.ts';

/** Reads a one-dimensional binary array back: [element type OID, elements]. */
function decode(buffer: Buffer): [number, Array<string | number | bigint | null>] {
  expect([buffer.readInt32BE(0), buffer.readInt32BE(16)]).toEqual([1, 1]);
  const oid = buffer.readInt32BE(8);
  const count = buffer.readInt32BE(12);
  const elements: Array<string | number | bigint | null> = [];
  let offset = 20;
  for (let index = 0; index < count; index++) {
    const length = buffer.readInt32BE(offset);
    offset += 4;
    if (length === -1) elements.push(null);
    else if (oid === 23) elements.push(buffer.readInt32BE(offset));
    else if (oid === 20) elements.push(buffer.readBigInt64BE(offset));
    else elements.push(buffer.toString('utf8', offset, offset + length));
    offset += Math.max(0, length);
  }
  expect(offset).toBe(buffer.length);
  return [oid, elements];
}

describe('binary array parameters of the Postgres store', () => {
  it('encodes text elements as they are, quotes, backslashes and non-ASCII included, with nulls', () => {
    const texts = ['{"a":"b\\\\c"}', '', 'NULL', null, 'é 中 😀', 'a,b', true, 3];
    expect(decode(pgBinaryArray(texts, 'text')!)).toEqual([25, ['{"a":"b\\\\c"}', '', 'NULL', null, 'é 中 😀', 'a,b', 't', '3']]);
  });

  it('encodes integers as int4 or int8, and gives up on a fraction, a string or an int4 overflow', () => {
    expect(decode(pgBinaryArray([1, null, -7], 'int')!)).toEqual([23, [1, null, -7]]);
    expect(decode(pgBinaryArray([2 ** 40, 0], 'bigint')!)).toEqual([20, [BigInt(2 ** 40), 0n]]);
    expect(pgBinaryArray([1.5], 'int')).toBeNull();
    expect(pgBinaryArray(['1'], 'bigint')).toBeNull();
    expect(pgBinaryArray([2 ** 31], 'int')).toBeNull();
  });

  it('finds the parameters a statement casts to arrays, and leaves out those used otherwise too', () => {
    expect([...arrayParameterTypes('SELECT * FROM unnest($1::text[], $2::int[], $3::bigint[]) WHERE x = $4')]).toEqual([
      [0, 'text'],
      [1, 'int'],
      [2, 'bigint'],
    ]);
    expect([...arrayParameterTypes('SELECT $1::text[], $10::int[] WHERE y = ANY($1)')]).toEqual([[9, 'int']]);
    expect([...arrayParameterTypes('SELECT $1::text[], $1::int[]')]).toEqual([]);
  });
});
