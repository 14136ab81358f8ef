import type { ServerReadableStream, sendUnaryData } from '@grpc/grpc-js';
import { Empty } from '@eventstore/db-client/generated/shared_pb';
import { AppendReq, AppendResp } from '@eventstore/db-client/generated/streams_pb';
import { FakeExpectation, FakeLog, ProposedEvent } from './fake-log';

/** Streams.Append: one options message, then the proposed events; answers once the client ends. */
export function appendHandler(log: FakeLog) {
  return (call: ServerReadableStream<AppendReq, AppendResp>, callback: sendUnaryData<AppendResp>): void => {
    let options: AppendReq.Options | undefined;
    const proposed: ProposedEvent[] = [];
    call.on('data', (request: AppendReq) => {
      if (request.hasOptions()) options = request.getOptions();
      const message = request.getProposedMessage();
      if (message) proposed.push(toProposedEvent(message));
    });
    call.on('end', () => {
      if (!options) return callback(new Error('append without options'));
      const streamName = Buffer.from(options.getStreamIdentifier()!.getStreamName_asU8()).toString('utf8');
      const expected = toExpectation(options);
      const outcome = log.append(streamName, expected, proposed);
      const response = new AppendResp();
      if (outcome.ok) {
        const success = new AppendResp.Success();
        if (outcome.lastPosition < 0) success.setNoPosition(new Empty());
        else success.setPosition(toPosition(outcome.lastPosition));
        if (outcome.lastRevision < 0) success.setNoStream(new Empty());
        else success.setCurrentRevision(String(outcome.lastRevision));
        response.setSuccess(success);
      } else {
        response.setWrongExpectedVersion(wrongExpectedVersion(expected, outcome.currentRevision));
      }
      callback(null, response);
    });
  };
}

function toPosition(position: number): AppendResp.Position {
  return new AppendResp.Position().setCommitPosition(String(position)).setPreparePosition(String(position));
}

function toProposedEvent(message: AppendReq.ProposedMessage): ProposedEvent {
  const metadata = message.getMetadataMap();
  return {
    id: message.getId()!.getString(),
    type: metadata.get('type') ?? '',
    contentType: metadata.get('content-type') ?? 'application/octet-stream',
    data: message.getData_asU8(),
    customMetadata: message.getCustomMetadata_asU8(),
  };
}

function toExpectation(options: AppendReq.Options): FakeExpectation {
  if (options.hasNoStream()) return { kind: 'no_stream' };
  if (options.hasStreamExists()) return { kind: 'stream_exists' };
  if (options.hasRevision()) return { kind: 'revision', revision: Number(options.getRevision()) };
  return { kind: 'any' };
}

function wrongExpectedVersion(expected: FakeExpectation, currentRevision: number | null): AppendResp.WrongExpectedVersion {
  const error = new AppendResp.WrongExpectedVersion();
  if (currentRevision === null) error.setCurrentNoStream(new Empty());
  else error.setCurrentRevision(String(currentRevision));
  if (expected.kind === 'revision') error.setExpectedRevision(String(expected.revision));
  else if (expected.kind === 'no_stream') error.setExpectedNoStream(new Empty());
  else if (expected.kind === 'stream_exists') error.setExpectedStreamExists(new Empty());
  else error.setExpectedAny(new Empty());
  return error;
}
