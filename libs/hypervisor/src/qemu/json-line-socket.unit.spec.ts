import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JsonLineSocket, MAX_LINE_BYTES } from './json-line-socket';

describe('JsonLineSocket', () => {
  const dir = mkdtempSync(join(tmpdir(), 'arbor-json-lines-'));
  const path = join(dir, 'peer.sock');
  let server: Server;
  afterEach(() => server?.close());
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** A peer that sends `data` as soon as a client connects. */
  const peerSending = (data: Buffer) =>
    new Promise<void>((resolve) => {
      server = createServer((socket) => {
        socket.on('error', () => undefined); // the client may hang up before all of it is read
        socket.write(data);
      });
      server.listen(path, resolve);
    });

  it('hands over each line as a document, resynchronisation bytes dropped', async () => {
    await peerSending(Buffer.concat([Buffer.from([0xff]), Buffer.from('{"a":1}\n{"b":2}\n')]));
    const messages: unknown[] = [];
    const socket = await JsonLineSocket.open(path, (message) => messages.push(message));
    while (messages.length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(messages).toEqual([{ a: 1 }, { b: 2 }]);
    socket.close();
  });

  it('drops the connection, saying why, when a line grows past the cap instead of buffering it', async () => {
    await peerSending(Buffer.alloc(MAX_LINE_BYTES + 1024 * 1024, 0x61)); // no newline anywhere
    const messages: unknown[] = [];
    const socket = await JsonLineSocket.open(path, (message) => messages.push(message));
    const closed = await new Promise<Error>((resolve) => socket.onClose(resolve));
    expect(closed.message).toBe(`a line longer than ${MAX_LINE_BYTES} bytes came in: connection dropped`);
    expect(messages).toEqual([]);
    expect(socket.closed).toBe(true);
  });
});
