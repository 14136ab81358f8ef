import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a receiver got: the Standard Webhooks headers and the body as sent. */
export interface ReceivedDelivery {
  /** 1 for the first request the receiver got. */
  n: number;
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  /** The answer's status. */
  status: number;
}

/** How the receiver answers its n-th request: a status, after a pause (a slow receiver). */
export type ReceiverAnswer = { status: number; delayMs?: number };

/**
 * A webhook receiver as a test runs one: an HTTP server on a free local port that keeps every
 * request and answers as `answer` says (200 by default). `onRequest` sees each request before it
 * is answered (e.g. to kill the sender while a delivery is in flight).
 */
export class WebhookReceiver {
  readonly received: ReceivedDelivery[] = [];
  answer: (n: number) => ReceiverAnswer = () => ({ status: 200 });
  onRequest: (delivery: ReceivedDelivery) => void = () => {};

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<WebhookReceiver> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const receiver = new WebhookReceiver(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/arbor`);
    server.on('request', (request, response) => receiver.handle(request, response));
    return receiver;
  }

  /** The event ids received (de-duplicated: what a receiver acts on once each). */
  ids(): Set<string> {
    return new Set(this.received.map((delivery) => delivery.id));
  }

  /** The answered deliveries' bodies, one per event id (the first one). */
  bodies(): Map<string, string> {
    const bodies = new Map<string, string>();
    for (const delivery of this.received) if (delivery.status < 300 && !bodies.has(delivery.id)) bodies.set(delivery.id, delivery.body);
    return bodies;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private handle(request: IncomingMessage, response: ServerResponse): void {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const n = this.received.length + 1;
      const { status, delayMs } = this.answer(n);
      const header = (name: string) => String(request.headers[name] ?? '');
      const delivery = { n, id: header('webhook-id'), timestamp: header('webhook-timestamp'), signature: header('webhook-signature'), body: Buffer.concat(chunks).toString('utf8'), status };
      this.received.push(delivery);
      this.onRequest(delivery);
      const reply = () => {
        if (!response.destroyed) response.writeHead(status, { 'content-type': 'text/plain' }).end(status < 300 ? 'ok' : `receiver says ${status}`);
      };
      if (delayMs) setTimeout(reply, delayMs);
      else reply();
    });
  }
}
