import type { StreamPart } from './compose-model.ts';

/** Where a transformer puts the parts it passes on. */
export interface PartSink {
  enqueue(part: StreamPart): void;
}

/**
 * A synchronous transformer of stream parts: the `Transformer` of a `TransformStream`, reduced to
 * what the model stack's entries need.
 */
export interface PartTransformer {
  transform(part: StreamPart, sink: PartSink): void;
  /** Called once at the stream's end, before it closes: passes on what is still held. */
  flush?(sink: PartSink): void;
}

/** What a {@link partStream} reads its parts from. */
export interface PartSource {
  /**
   * Reads on from the provider and passes what it read to `sink`; resolves false at the end (the
   * stream then flushes its transformers and closes). A rejection errors the stream.
   */
  pull(sink: PartSink): Promise<boolean>;
  cancel(reason: unknown): Promise<void> | void;
}

const fusedStages = Symbol('cadre.fused-stages');

interface FusedStream extends ReadableStream<StreamPart> {
  /** The transformers run inside this stream's pulls, until its first pull; undefined after. */
  [fusedStages]?: PartTransformer[];
}

/**
 * A stream of the parts `source` reads, on which {@link pipeParts} adds transformers inside the
 * same pull instead of a stream of their own each: a `TransformStream` costs about 0.7 µs per part,
 * and a streamed answer has hundreds. It reads nothing before it is read (`highWaterMark` 0), and a
 * pull that passed nothing on (a transformer held a word back) reads on.
 */
export function partStream(source: PartSource): ReadableStream<StreamPart> {
  const stages: PartTransformer[] = [];
  /** sinks[i] feeds stages[i]; the last one is the consumer. Built at the first pull. */
  let sinks: PartSink[] | undefined;
  let ended = false;
  let passed = 0;
  let stream: FusedStream;

  function build(controller: ReadableStreamDefaultController<StreamPart>): PartSink[] {
    stream[fusedStages] = undefined;
    const built: PartSink[] = new Array<PartSink>(stages.length + 1);
    built[stages.length] = {
      enqueue(part) {
        passed++;
        controller.enqueue(part);
      },
    };
    for (let index = stages.length - 1; index >= 0; index--) {
      const stage = stages[index];
      const next = built[index + 1];
      built[index] = { enqueue: (part) => stage.transform(part, next) };
    }
    return built;
  }

  stream = new ReadableStream<StreamPart>(
    {
      async pull(controller) {
        sinks ??= build(controller);
        const before = passed;
        while (!ended && passed === before) {
          let more: boolean;
          try {
            more = await source.pull(sinks[0]);
          } catch (error) {
            ended = true;
            throw error;
          }
          if (more || ended) continue;
          ended = true;
          for (let index = 0; index < stages.length; index++) stages[index].flush?.(sinks[index + 1]);
          controller.close();
        }
      },
      cancel(reason) {
        ended = true;
        return source.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
  stream[fusedStages] = stages;
  return stream;
}

/**
 * `stream` with `transformer` applied to its parts: inside a {@link partStream} not read yet,
 * as one more stage of its pulls (the stream itself is returned); any other stream is piped
 * through a `TransformStream`.
 */
export function pipeParts(stream: ReadableStream<StreamPart>, transformer: PartTransformer): ReadableStream<StreamPart> {
  const stages = (stream as FusedStream)[fusedStages];
  if (stages !== undefined && !stream.locked) {
    stages.push(transformer);
    return stream;
  }
  return stream.pipeThrough(
    new TransformStream<StreamPart, StreamPart>({
      transform: (part, controller) => transformer.transform(part, controller),
      flush: transformer.flush ? (controller) => transformer.flush!(controller) : undefined,
    }),
  );
}
