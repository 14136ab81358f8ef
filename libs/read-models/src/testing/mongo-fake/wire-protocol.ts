import { deserialize, serialize, type Document } from 'bson';

/**
 * The few MongoDB wire-protocol messages the official driver exchanges with a server:
 * OP_QUERY/OP_REPLY for the legacy `isMaster` handshake (sent before the driver knows the
 * server speaks OP_MSG), and OP_MSG for every command after it.
 * https://www.mongodb.com/docs/manual/reference/mongodb-wire-protocol/
 */
export const OP_REPLY = 1;
export const OP_QUERY = 2004;
export const OP_MSG = 2013;

const HEADER_LENGTH = 16;
const CHECKSUM_PRESENT = 1;
const MORE_TO_COME = 2;

export interface IncomingCommand {
  requestId: number;
  opCode: typeof OP_QUERY | typeof OP_MSG;
  command: Document;
  /** The client expects no reply (OP_MSG moreToCome, e.g. unacknowledged writes). */
  moreToCome: boolean;
}

/** Splits complete messages off the front of `buffer`; returns them and the unconsumed rest. */
export function takeMessages(buffer: Buffer): { messages: Buffer[]; rest: Buffer } {
  const messages: Buffer[] = [];
  let offset = 0;
  while (buffer.length - offset >= 4) {
    const length = buffer.readInt32LE(offset);
    if (buffer.length - offset < length) break;
    messages.push(buffer.subarray(offset, offset + length));
    offset += length;
  }
  return { messages, rest: buffer.subarray(offset) };
}

export function parseMessage(message: Buffer): IncomingCommand {
  const requestId = message.readInt32LE(4);
  const opCode = message.readInt32LE(12);
  if (opCode === OP_MSG) return { requestId, opCode, ...parseOpMsg(message) };
  if (opCode === OP_QUERY) return { requestId, opCode, command: parseOpQuery(message), moreToCome: false };
  throw new Error(`unsupported wire opcode ${opCode}`);
}

function parseOpMsg(message: Buffer): { command: Document; moreToCome: boolean } {
  const flags = message.readUInt32LE(HEADER_LENGTH);
  const end = message.length - (flags & CHECKSUM_PRESENT ? 4 : 0);
  let body: Document = {};
  const sequences: Record<string, Document[]> = {};
  let offset = HEADER_LENGTH + 4;
  while (offset < end) {
    const kind = message[offset++];
    const size = message.readInt32LE(offset);
    if (kind === 0) {
      body = deserialize(message.subarray(offset, offset + size));
    } else {
      // Kind 1, a document sequence: the driver sends insert/update/delete batches this way.
      const nameEnd = message.indexOf(0, offset + 4);
      const identifier = message.toString('utf8', offset + 4, nameEnd);
      const documents: Document[] = [];
      for (let at = nameEnd + 1; at < offset + size; at += message.readInt32LE(at)) {
        documents.push(deserialize(message.subarray(at, at + message.readInt32LE(at))));
      }
      sequences[identifier] = documents;
    }
    offset += size;
  }
  return { command: { ...body, ...sequences }, moreToCome: (flags & MORE_TO_COME) !== 0 };
}

function parseOpQuery(message: Buffer): Document {
  const namespaceEnd = message.indexOf(0, HEADER_LENGTH + 4);
  const databaseName = message.toString('utf8', HEADER_LENGTH + 4, namespaceEnd).split('.')[0];
  const documentStart = namespaceEnd + 1 + 8; // skip numberToSkip and numberToReturn
  const query = deserialize(message.subarray(documentStart, documentStart + message.readInt32LE(documentStart)));
  const command = query.$query ?? query;
  return { ...command, $db: databaseName };
}

export function encodeOpMsg(responseTo: number, reply: Document): Buffer {
  const body = serialize(reply);
  const header = Buffer.alloc(HEADER_LENGTH + 4 + 1);
  writeHeader(header, HEADER_LENGTH + 5 + body.length, responseTo, OP_MSG);
  header.writeUInt32LE(0, HEADER_LENGTH); // flags
  header[HEADER_LENGTH + 4] = 0; // one section of kind 0
  return Buffer.concat([header, body]);
}

export function encodeOpReply(responseTo: number, reply: Document): Buffer {
  const body = serialize(reply);
  const header = Buffer.alloc(HEADER_LENGTH + 20);
  writeHeader(header, header.length + body.length, responseTo, OP_REPLY);
  // responseFlags 0, cursorId 0 (8 bytes), startingFrom 0: already zero.
  header.writeInt32LE(1, HEADER_LENGTH + 16); // numberReturned
  return Buffer.concat([header, body]);
}

let nextRequestId = 1;

function writeHeader(header: Buffer, length: number, responseTo: number, opCode: number): void {
  header.writeInt32LE(length, 0);
  header.writeInt32LE(nextRequestId++, 4);
  header.writeInt32LE(responseTo, 8);
  header.writeInt32LE(opCode, 12);
}
