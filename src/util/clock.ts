/** The current time as an ISO-8601 UTC string; injected so tests are deterministic. */
export type Now = () => string;

/** The current time in epoch milliseconds (throttles, deadlines, lease arithmetic); injected like {@link Now}. */
export type NowMs = () => number;

/** The real clock in epoch milliseconds. */
export const systemNowMs: NowMs = function systemNowMs() {
  return Date.now();
};

/** A random number in [0, 1) (jittered waits); injected like {@link NowMs} so tests are deterministic. */
export type Random = () => number;

/** The system's random numbers (`Math.random`), the one place domain code reads them. */
export const systemRandom: Random = function systemRandom() {
  return Math.random();
};

/** The time `ms` after `at` (an ISO string from a {@link Now}), as an ISO string. */
export function addMs(at: string, ms: number): string {
  return new Date(Date.parse(at) + ms).toISOString();
}

/** A new id with the given prefix (`run`, `ses`, `evt`) that sorts by creation time. */
export type NewId = (prefix: string) => string;

let lastNowTime = Number.NaN;
let lastNow = '';

/** The real clock (one string per millisecond: it is asked for on every write). */
export const systemNow: Now = function systemNow() {
  const time = Date.now();
  if (time !== lastNowTime) {
    lastNowTime = time;
    lastNow = new Date(time).toISOString();
  }
  return lastNow;
};

const alphabet = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
let lastTime = 0;
let counter = 0;

/**
 * Time-sortable ids: 10 characters of milliseconds, then a per-process counter and random tail,
 * in Crockford base32 (like ULID). Ids made in the same millisecond still sort in creation order.
 */
export const timeSortedId: NewId = function timeSortedId(prefix) {
  const time = Date.now();
  if (time === lastTime) counter++;
  else {
    lastTime = time;
    counter = 0;
  }
  let head = '';
  let value = time;
  for (let index = 0; index < 10; index++) {
    head = alphabet[value % 32] + head;
    value = Math.floor(value / 32);
  }
  let middle = '';
  value = counter;
  for (let index = 0; index < 4; index++) {
    middle = alphabet[value % 32] + middle;
    value = Math.floor(value / 32);
  }
  let tail = '';
  for (let index = 0; index < 8; index++) tail += alphabet[randomByte() % 32];
  return `${prefix}_${head}${middle}${tail}`;
};

/** Random bytes drawn a block at a time: one call into the system's generator per 512 ids. */
const randomPool = new Uint8Array(4096);
let randomAt = randomPool.length;

function randomByte(): number {
  if (randomAt === randomPool.length) {
    crypto.getRandomValues(randomPool);
    randomAt = 0;
  }
  return randomPool[randomAt++];
}
