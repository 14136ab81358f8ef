import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MAX_ANSWER_BYTES, sendWebhook } from './webhook-sender';

/** sendWebhook against a local HTTP server: what an answer, a slow one, a redirect or no server make of an attempt. */
describe('webhook sender', () => {
  let server: Server;
  let url: string;
  let handle: (request: IncomingMessage, response: ServerResponse, body: string) => void;
  const received: { headers: IncomingMessage['headers']; body: string }[] = [];

  beforeAll(async () => {
    server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        received.push({ headers: request.headers, body });
        handle(request, response, body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  const send = (timeoutMs = 2000) => sendWebhook({ url, headers: { 'content-type': 'application/json', 'webhook-id': 'e-1' }, body: '{"a":1}', timeoutMs, allowPrivate: true });

  it('POSTs the body with its headers; any 2xx is delivered', async () => {
    handle = (_, response) => response.writeHead(202).end('accepted');
    expect(await send()).toEqual({ ok: true, status_code: 202 });
    expect(received.at(-1)).toMatchObject({ body: '{"a":1}', headers: { 'content-type': 'application/json', 'webhook-id': 'e-1' } });
  });

  it('reports another status with the start of the answer, read at most a few KB of it', async () => {
    handle = (_, response) => response.writeHead(500).end(`oops\n${'x'.repeat(1_000_000)}`);
    const result = await send();
    expect(result).toMatchObject({ ok: false, status_code: 500 });
    const error = (result as { error: string }).error;
    expect(error.startsWith('HTTP 500: oops x')).toBe(true);
    expect(error.length).toBeLessThanOrEqual('HTTP 500: '.length + MAX_ANSWER_BYTES);
  });

  it('does not follow a redirect', async () => {
    handle = (_, response) => response.writeHead(301, { location: 'http://elsewhere.test/' }).end();
    expect(await send()).toEqual({ ok: false, status_code: 301, error: 'HTTP 301 (redirects are not followed: to http://elsewhere.test/)' });
  });

  it('gives up an answer that does not come in time, headers or body', async () => {
    handle = () => {}; // never answers
    expect(await send(200)).toEqual({ ok: false, status_code: null, error: 'no answer within 200 ms' });
    handle = (_, response) => response.writeHead(500).write('partial'); // never ends the body
    expect(await send(200)).toEqual({ ok: false, status_code: null, error: 'no answer within 200 ms' });
  });

  it('reports a refused connection', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    expect(await sendWebhook({ url: `http://127.0.0.1:${port}/`, headers: {}, body: '{}', timeoutMs: 2000, allowPrivate: true })).toEqual({ ok: false, status_code: null, error: 'request failed: ECONNREFUSED' });
  });

  it('refuses private destinations unless allowed: IP literals and localhost before connecting, names as they resolve', async () => {
    handle = (_, response) => response.writeHead(200).end();
    const before = received.length;
    for (const target of [url, url.replace('127.0.0.1', 'localhost'), 'http://[::1]:9/', 'http://169.254.169.254/latest/meta-data', 'http://10.1.2.3/']) {
      const result = await sendWebhook({ url: target, headers: {}, body: '{}', timeoutMs: 2000 });
      expect(result).toMatchObject({ ok: false, status_code: null });
      expect((result as { error: string }).error).toMatch(/^refused: .*(private address|the host itself).*ARBOR_WEBHOOK_ALLOW_PRIVATE/);
    }
    expect(received.length).toBe(before);
  });
});
