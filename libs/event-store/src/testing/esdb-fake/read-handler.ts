import { randomUUID } from 'node:crypto';
import type { ServerWritableStream } from '@grpc/grpc-js';
import { StreamIdentifier, UUID } from '@eventstore/db-client/generated/shared_pb';
import { ReadReq, ReadResp } from '@eventstore/db-client/generated/streams_pb';
import { FakeEvent, FakeLog } from './fake-log';

type ReadCall = ServerWritableStream<ReadReq, ReadResp>;

/**
 * Streams.Read: reads of one stream or of $all (forwards/backwards, from start/end/a revision or
 * position, with a count) and subscriptions to $all (confirmation, catch-up, "caught up", live).
 */
export function readHandler(log: FakeLog) {
  return (call: ReadCall): void => {
    const options = call.request.getOptions()!;
    if (options.hasSubscription()) {
      if (options.hasAll()) subscribeToAll(log, call, options.getAll()!);
      else call.destroy(new Error('the fake only supports subscriptions to $all'));
      return;
    }
    const backwards = options.getReadDirection() === ReadReq.Options.ReadDirection.BACKWARDS;
    const count = Number(options.getCount());
    if (options.hasStream()) readStream(log, call, options.getStream()!, backwards, count);
    else writeEvents(call, selectFromAll(log.events(), options.getAll()!, backwards).slice(0, count));
    call.end();
  };
}

function readStream(log: FakeLog, call: ReadCall, options: ReadReq.Options.StreamOptions, backwards: boolean, count: number): void {
  const identifier = options.getStreamIdentifier()!;
  const stream = log.stream(Buffer.from(identifier.getStreamName_asU8()).toString('utf8'));
  if (stream) writeEvents(call, selectFromStream(stream, options, backwards).slice(0, count));
  else call.write(new ReadResp().setStreamNotFound(new ReadResp.StreamNotFound().setStreamIdentifier(identifier)));
}

function selectFromStream(stream: FakeEvent[], options: ReadReq.Options.StreamOptions, backwards: boolean): FakeEvent[] {
  if (backwards) {
    const from = options.hasRevision() ? Number(options.getRevision()) : Infinity;
    return stream.filter((event) => event.revision <= from).reverse();
  }
  if (options.hasEnd()) return [];
  const from = options.hasRevision() ? Number(options.getRevision()) : 0;
  return stream.filter((event) => event.revision >= from);
}

/** Like the server: forwards reads include the event at the position, backwards reads stop before it. */
function selectFromAll(all: readonly FakeEvent[], options: ReadReq.Options.AllOptions, backwards: boolean): FakeEvent[] {
  const position = options.hasPosition() ? Number(options.getPosition()!.getCommitPosition()) : undefined;
  if (backwards) {
    const before = position ?? Infinity;
    return all.filter((event) => event.position < before).reverse();
  }
  if (options.hasEnd()) return [];
  return all.filter((event) => event.position >= (position ?? 0));
}

function subscribeToAll(log: FakeLog, call: ReadCall, options: ReadReq.Options.AllOptions): void {
  call.write(new ReadResp().setConfirmation(new ReadResp.SubscriptionConfirmation().setSubscriptionId(randomUUID())));
  // Subscriptions deliver what comes after the given position (unlike reads, which include it).
  const after = options.hasPosition() ? Number(options.getPosition()!.getCommitPosition()) : -1;
  if (!options.hasEnd()) writeEvents(call, log.events().filter((event) => event.position > after));
  call.write(new ReadResp().setCaughtUp(new ReadResp.CaughtUp()));
  // Catch-up and registration happen in the same tick, so no append can fall in between.
  const stop = log.onAppended((event) => writeEvents(call, [event]));
  call.on('cancelled', stop);
  call.on('close', stop);
}

function writeEvents(call: ReadCall, events: readonly FakeEvent[]): void {
  for (const event of events) call.write(new ReadResp().setEvent(toReadEvent(event)));
}

function toReadEvent(event: FakeEvent): ReadResp.ReadEvent {
  const recorded = new ReadResp.ReadEvent.RecordedEvent()
    .setId(new UUID().setString(event.id))
    .setStreamIdentifier(new StreamIdentifier().setStreamName(Buffer.from(event.streamName, 'utf8')))
    .setStreamRevision(String(event.revision))
    .setCommitPosition(String(event.position))
    .setPreparePosition(String(event.position))
    .setData(event.data)
    .setCustomMetadata(event.customMetadata);
  const metadata = recorded.getMetadataMap();
  metadata.set('type', event.type);
  metadata.set('content-type', event.contentType);
  metadata.set('created', event.createdTicks.toString());
  return new ReadResp.ReadEvent().setEvent(recorded).setCommitPosition(String(event.position));
}
