import { describe, expect, it } from 'vitest';
import type { StreamPart } from './compose-model.ts';
import { partStream, pipeParts, type PartSink, type PartSource, type PartTransformer } from './pipe-parts.ts';

/** A source that passes `parts` one per pull, counting its pulls. */
function sourceOf(parts: StreamPart[]): PartSource & { pulls: number; canceled: unknown[] } {
  let index = 0;
  return {
    pulls: 0,
    canceled: [],
    async pull(sink: PartSink) {
      this.pulls++;
      if (index >= parts.length) return false;
      sink.enqueue(parts[index++]);
      return true;
    },
    cancel(reason) {
      this.canceled.push(reason);
    },
  };
}

const text = (delta: string): StreamPart => ({ type: 'text-delta', id: 't', delta });

/** Appends `suffix` to each delta; at the end, passes on a marker part. */
function suffixing(suffix: string): PartTransformer {
  return {
    transform: (part, sink) => sink.enqueue(part.type === 'text-delta' ? { ...part, delta: `${String(part.delta)}${suffix}` } : part),
    flush: (sink) => sink.enqueue({ type: 'flushed', by: suffix }),
  };
}

async function readAll(stream: ReadableStream<StreamPart>): Promise<StreamPart[]> {
  const parts: StreamPart[] = [];
  for await (const part of stream) parts.push(part);
  return parts;
}

describe('partStream and pipeParts', () => {
  it('runs the transformers of an unread part stream inside its pulls, in the order they were added, flushing each at the end', async () => {
    const stream = partStream(sourceOf([text('a'), text('b')]));
    const first = pipeParts(stream, suffixing('1'));
    const second = pipeParts(first, suffixing('2'));
    expect(first).toBe(stream);
    expect(second).toBe(stream);
    expect(await readAll(second)).toEqual([text('a12'), text('b12'), { type: 'flushed', by: '1' }, { type: 'flushed', by: '2' }]);
  });

  it('reads from its source only as far as the reader asks, and stops at the end', async () => {
    const source = sourceOf([text('a'), text('b')]);
    let flushes = 0;
    // A transformer with nothing to flush, and one that flushes nothing.
    const stream = pipeParts(pipeParts(partStream(source), { transform: (part, sink) => sink.enqueue(part) }), {
      transform: (part, sink) => sink.enqueue(part),
      flush: () => void flushes++,
    });
    const reader = stream.getReader();
    expect((await reader.read()).value).toEqual(text('a'));
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(source.pulls).toBe(1);
    expect((await reader.read()).value).toEqual(text('b'));
    expect(await reader.read()).toEqual({ done: true, value: undefined });
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(source.pulls).toBe(3);
    expect(flushes).toBe(1);
  });

  it('stops reading its source when canceled while a transformer held everything back', async () => {
    let pulls = 0;
    const stream = pipeParts(
      partStream({
        pull: async (sink) => {
          pulls++;
          await new Promise((resolve) => setTimeout(resolve, 1));
          sink.enqueue(text('more'));
          return true;
        },
        cancel: () => {},
      }),
      { transform: () => {} },
    );
    const reader = stream.getReader();
    const pending = reader.read();
    await new Promise((resolve) => setTimeout(resolve, 10));
    await reader.cancel('enough');
    expect(await pending).toEqual({ done: true, value: undefined });
    const atCancel = pulls;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(pulls).toBeLessThanOrEqual(atCancel + 1);
  });

  it('reads on while a transformer holds parts back, and reads nothing before it is read', async () => {
    const source = sourceOf([text('a'), text('b'), text('c')]);
    const held: StreamPart[] = [];
    const stream = pipeParts(partStream(source), {
      transform: (part) => void held.push(part),
      flush: (sink) => sink.enqueue({ type: 'all', count: held.length }),
    });
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(source.pulls).toBe(0);
    const reader = stream.getReader();
    expect(await reader.read()).toEqual({ done: false, value: { type: 'all', count: 3 } });
    expect(source.pulls).toBe(4);
    expect((await reader.read()).done).toBe(true);
  });

  it('pipes a stream that is not a part stream, or one already read, through a stream of its own', async () => {
    const plain = new ReadableStream<StreamPart>({
      start(controller) {
        controller.enqueue(text('x'));
        controller.close();
      },
    });
    const piped = pipeParts(plain, suffixing('!'));
    expect(piped).not.toBe(plain);
    expect(await readAll(piped)).toEqual([text('x!'), { type: 'flushed', by: '!' }]);

    const started = partStream(sourceOf([text('a'), text('b')]));
    const reader = started.getReader();
    expect((await reader.read()).value).toEqual(text('a'));
    reader.releaseLock();
    const late = pipeParts(started, suffixing('?'));
    expect(late).not.toBe(started);
    expect(await readAll(late)).toEqual([text('b?'), { type: 'flushed', by: '?' }]);
  });

  it('errors the stream with what the source throws, and hands a cancel to the source', async () => {
    const failure = new Error('the provider went away');
    const failing = partStream({
      pull: async () => {
        throw failure;
      },
      cancel: () => {},
    });
    await expect(failing.getReader().read()).rejects.toBe(failure);

    const source = sourceOf([text('a'), text('b')]);
    const stream = partStream(source);
    const reader = stream.getReader();
    await reader.read();
    await reader.cancel('enough');
    expect(source.canceled).toEqual(['enough']);
  });
});
