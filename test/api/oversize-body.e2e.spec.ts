import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { InMemoryDriver } from '@arbor/hypervisor';
import { DEFAULT_OVERSIZE_DRAIN } from '../../apps/api/src/http/oversize-body';
import { startTestArbor, type TestArbor } from '../support/arbor-harness';

const MIB = 1024 * 1024;
const TOO_LARGE = { error: 'request body is too large', success: false };

/**
 * A body over the 16 MiB limit is answered 413 with the error envelope every time, however the
 * client sends it: a fetch client (undici, as the fuzz suite), again and again and several at
 * once; a client that writes its whole body before it reads (its connection then serves the next
 * request); and one that would send a gigabyte, which gets its 413 long before and is cut off past
 * the drain bound instead of being read to the end. In-memory hypervisor.
 */
describe('oversize request bodies (HTTP)', () => {
  let arbor: TestArbor;
  let vm: string;
  let port: number;

  beforeAll(async () => {
    arbor = await startTestArbor({ driver: new InMemoryDriver() });
    vm = await arbor.bootVm();
    port = Number(new URL(arbor.url).port);
  });
  afterAll(() => arbor?.destroy());

  const oversize = `{"pad":"${'x'.repeat(17 * MIB)}"}`;
  const send = async (method: string, path: string) => {
    const res = await fetch(`${arbor.url}${path}`, { method, headers: { authorization: `Bearer ${arbor.adminKey}`, 'content-type': 'application/json' }, body: oversize });
    return { status: res.status, body: await res.json() };
  };
  const targets: [string, string][] = [
    ['POST', '/api/v1/vm/new_root'],
    ['PATCH', '/api/v1/vm/{vm}/label'],
    ['POST', '/api/v1/vm/{vm}/exec'],
    ['PUT', '/api/v1/vm/{vm}/files'],
  ];

  it('answers 413 and the envelope to every 17 MiB body, one after another and several at once, and logs nothing', async () => {
    const before = await arbor.infra.eventStore.headPosition();
    const answers = [];
    for (let round = 0; round < 3; round++) {
      for (const [method, path] of targets) answers.push(await send(method, path.replace('{vm}', vm)));
    }
    answers.push(...(await Promise.all(targets.flatMap(([method, path]) => [send(method, path.replace('{vm}', vm)), send(method, path.replace('{vm}', vm))]))));
    expect(answers).toEqual(Array(answers.length).fill({ status: 413, body: TOO_LARGE }));
    expect(await arbor.infra.eventStore.headPosition()).toBe(before);
  }, 300_000);

  /** A raw connection: what it receives, and whether it closed. */
  const rawConnection = async () => {
    const socket = connect(port, '127.0.0.1');
    await once(socket, 'connect');
    const state = { received: '', closed: false, socket };
    socket.on('data', (chunk) => (state.received += chunk.toString()));
    socket.on('error', () => undefined);
    socket.on('close', () => (state.closed = true));
    return state;
  };
  const head = (method: string, path: string, length: number) =>
    `${method} ${path} HTTP/1.1\r\nHost: arbor\r\nAuthorization: Bearer ${arbor.adminKey}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;
  /** Resolves once the socket takes more, or is gone. */
  const writable = (socket: Socket) =>
    new Promise<void>((resolve) => {
      const done = () => {
        socket.off('drain', done).off('close', done);
        resolve();
      };
      socket.on('drain', done).on('close', done);
    });
  const until = async (condition: () => boolean) => {
    while (!condition()) await new Promise((resolve) => setTimeout(resolve, 10));
  };

  it('answers a client that writes its whole body before it reads, and its connection serves the next request', async () => {
    const connection = await rawConnection();
    connection.socket.write(head('POST', '/api/v1/vm/new_root', Buffer.byteLength(oversize)));
    if (!connection.socket.write(oversize)) await once(connection.socket, 'drain');
    await until(() => connection.received.includes('"success":false}'));
    expect(connection.received).toMatch(/^HTTP\/1\.1 413 Payload Too Large\r\n/);
    expect(connection.received.endsWith(JSON.stringify(TOO_LARGE))).toBe(true);
    // The body was read to its end: the next request on the connection is a request, answered.
    connection.received = '';
    connection.socket.write(`GET /health HTTP/1.1\r\nHost: arbor\r\n\r\n`);
    await until(() => /\r\n\r\n.+/s.test(connection.received));
    expect(connection.received).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    connection.socket.destroy();
  }, 120_000);

  it('answers a gigabyte body before it is sent, and cuts its connection past the drain bound instead of reading it all', async () => {
    const connection = await rawConnection();
    const declared = 1024 * MIB;
    connection.socket.write(head('POST', '/api/v1/vm/new_root', declared));
    const chunk = Buffer.alloc(MIB, 0x78);
    let written = 0;
    let writtenWhenAnswered: number | null = null;
    while (written < declared && !connection.closed && !connection.socket.destroyed) {
      if (writtenWhenAnswered === null && connection.received.includes('"success":false}')) writtenWhenAnswered = written;
      const flushed = connection.socket.write(chunk);
      written += chunk.length;
      if (!flushed) await writable(connection.socket);
    }
    await until(() => connection.closed);
    expect(connection.received).toMatch(/^HTTP\/1\.1 413 Payload Too Large\r\n/);
    expect(connection.received.endsWith(JSON.stringify(TOO_LARGE))).toBe(true);
    // Answered within the first few mebibytes, cut off past the bound: never read to the end.
    expect(writtenWhenAnswered ?? written).toBeLessThan(DEFAULT_OVERSIZE_DRAIN.bytes);
    expect(written).toBeLessThan(declared);
  }, 300_000);
});

