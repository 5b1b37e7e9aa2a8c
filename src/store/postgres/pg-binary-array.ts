/** The element types of array parameters sent in binary, by the cast a statement gives them. */
export type ArrayElementType = 'text' | 'int' | 'bigint';

/** Postgres type OIDs of the element types (`text`, `int4`, `int8`). */
const elementOids: Record<ArrayElementType, number> = { text: 25, int: 23, bigint: 20 };

const castPattern = /\$(\d+)::(text|int|bigint)\[\]/g;

/**
 * The element type of each parameter `text` casts to a one-dimensional array (`$3::text[]`), by
 * the parameter's index (0 for `$1`). Such a parameter's type is the cast's: the server reads a
 * binary value of it as that array (see {@link pgBinaryArray}).
 */
export function arrayParameterTypes(text: string): Map<number, ArrayElementType> {
  const types = new Map<number, ArrayElementType>();
  const casts = new Map<number, number>();
  const unsure = new Set<number>();
  for (const [, index, type] of text.matchAll(castPattern)) {
    const place = Number(index) - 1;
    const known = types.get(place);
    if (known !== undefined && known !== type) unsure.add(place);
    types.set(place, type as ArrayElementType);
    casts.set(place, (casts.get(place) ?? 0) + 1);
  }
  // A parameter also used without the cast, or cast to two types, may have another type: it is sent as a literal.
  const uses = new Map<number, number>();
  for (const [, index] of text.matchAll(/\$(\d+)(?!\d)/g)) uses.set(Number(index) - 1, (uses.get(Number(index) - 1) ?? 0) + 1);
  for (const [place, count] of casts) if (uses.get(place) !== count) unsure.add(place);
  for (const place of unsure) types.delete(place);
  return types;
}

/** A text element as `pg` would send it in an array literal: booleans `t`/`f`, everything else its string. */
function elementText(value: unknown): string {
  return typeof value === 'boolean' ? (value ? 't' : 'f') : String(value);
}

/**
 * A one-dimensional array in Postgres's binary format, or null when an element does not fit the
 * type (a fraction or a string among integers; the caller then sends a literal, and the server
 * says what is wrong). Sent as a Buffer, `pg` marks the parameter binary, and the server copies
 * each element instead of parsing a literal with every quote and backslash escaped: the held
 * rows of a batch are hundreds of JSON strings, full of quotes.
 */
export function pgBinaryArray(values: readonly unknown[], type: ArrayElementType): Buffer | null {
  const count = values.length;
  const integer = type !== 'text';
  let size = 20 + 4 * count;
  let hasNull = 0;
  const texts: Array<string | null> = integer ? [] : new Array<string | null>(count);
  for (let index = 0; index < count; index++) {
    const value = values[index];
    if (value === null || value === undefined) {
      hasNull = 1;
      if (!integer) texts[index] = null;
      continue;
    }
    if (integer) {
      if (typeof value !== 'number' || !Number.isSafeInteger(value)) return null;
      if (type === 'int' && (value > 2_147_483_647 || value < -2_147_483_648)) return null;
      size += type === 'int' ? 4 : 8;
    } else {
      const text = elementText(value);
      texts[index] = text;
      size += Buffer.byteLength(text);
    }
  }
  const buffer = Buffer.allocUnsafe(size);
  buffer.writeInt32BE(1, 0);
  buffer.writeInt32BE(hasNull, 4);
  buffer.writeInt32BE(elementOids[type], 8);
  buffer.writeInt32BE(count, 12);
  buffer.writeInt32BE(1, 16);
  let offset = 20;
  for (let index = 0; index < count; index++) {
    const value = values[index];
    if (value === null || value === undefined) {
      offset = buffer.writeInt32BE(-1, offset);
    } else if (type === 'int') {
      offset = buffer.writeInt32BE(4, offset);
      offset = buffer.writeInt32BE(value as number, offset);
    } else if (type === 'bigint') {
      offset = buffer.writeInt32BE(8, offset);
      offset = buffer.writeBigInt64BE(BigInt(value as number), offset);
    } else {
      const length = buffer.write(texts[index]!, offset + 4);
      buffer.writeInt32BE(length, offset);
      offset += 4 + length;
    }
  }
  return buffer;
}
