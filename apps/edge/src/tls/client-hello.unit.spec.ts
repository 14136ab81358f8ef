import { connect, createServer } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { MAX_CLIENT_HELLO_BYTES, parseClientHello } from './client-hello';

/** The ClientHello a real TLS client (Node's, OpenSSL) sends for `servername`. */
async function realClientHello(servername?: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const server = createServer((socket) => {
      socket.once('data', (bytes) => {
        resolve(bytes);
        socket.destroy();
        server.close();
      });
    }).listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      const client = tlsConnect({ socket: connect(port, '127.0.0.1'), servername, rejectUnauthorized: false });
      client.on('error', () => {});
    });
    server.on('error', reject);
  });
}

describe('reading the SNI of a TLS ClientHello', () => {
  it("finds a real client's server name, lowercase, from any prefix that holds the whole ClientHello", async () => {
    const hello = await realClientHello('ABC.vm.Example.com');
    expect(parseClientHello(hello)).toEqual({ kind: 'hello', server_name: 'abc.vm.example.com' });
    for (const cut of [0, 1, 5, 40, hello.length - 1]) expect(parseClientHello(hello.subarray(0, cut))).toEqual({ kind: 'incomplete' });
  });

  it('says when there is no server name', async () => {
    expect(parseClientHello(await realClientHello())).toEqual({ kind: 'hello', server_name: null });
  });

  it('reads a ClientHello split over two records', async () => {
    const hello = await realClientHello('split.example.com');
    const body = hello.subarray(5);
    const record = (part: Buffer) => Buffer.concat([Buffer.from([0x16, 0x03, 0x01, part.length >> 8, part.length & 0xff]), part]);
    expect(parseClientHello(Buffer.concat([record(body.subarray(0, 50)), record(body.subarray(50))]))).toEqual({ kind: 'hello', server_name: 'split.example.com' });
  });

  it('refuses what is not TLS, and lengths that point past the message', async () => {
    expect(parseClientHello(Buffer.from('GET / HTTP/1.1\r\n'))).toMatchObject({ kind: 'not_tls' });
    expect(parseClientHello(Buffer.from('SSH-2.0-x\r\n'))).toMatchObject({ kind: 'not_tls' });
    const hello = Buffer.from(await realClientHello('x.example.com'));
    const lying = Buffer.from(hello);
    lying[5 + 4 + 2 + 32] = 0xff; // a session id longer than the message
    expect(parseClientHello(lying)).toEqual({ kind: 'not_tls', reason: 'a malformed ClientHello' });
    const huge = Buffer.from(hello);
    huge.writeUIntBE(MAX_CLIENT_HELLO_BYTES + 1, 6, 3);
    expect(parseClientHello(huge)).toMatchObject({ kind: 'not_tls' });
    expect(parseClientHello(Buffer.from([0x16, 0x03, 0x01, 0x00, 0x00]))).toMatchObject({ kind: 'not_tls' });
  });
});
