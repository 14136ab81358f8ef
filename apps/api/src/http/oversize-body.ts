import type { IncomingMessage } from 'node:http';
import { HttpError } from './http-error';

/** What a refused body may still send, and for how long, before its connection is cut. */
export interface OversizeDrain {
  bytes: number;
  ms: number;
}

/** A client sending a body a little over the limit finishes (the fuzz sends 17 MiB); an endless one is cut. */
export const DEFAULT_OVERSIZE_DRAIN: OversizeDrain = { bytes: 64 * 1024 * 1024, ms: 60_000 };

/**
 * A body declared (Content-Length) larger than `limitBytes` is refused before it is read: 413 with
 * the error envelope at once, through the error filter like every refusal. What the client still
 * sends is read and dropped while it sends it, up to `drain` (bytes and time), so that a client
 * that writes its whole body before it reads the answer (most do) finishes writing, reads the 413
 * and may even reuse the connection, whose framing stays whole: closing a socket the client is
 * still writing to makes the kernel reset it, and the client may lose the answer with it. Past the
 * bound the connection is cut: by then the answer has long been sent. A body without a declared
 * length is left to the body parser, which stops at the limit (and Node's requestTimeout bounds
 * how long any request may take to arrive).
 */
export function refuseOversizeBodies(limitBytes: number, drain: OversizeDrain = DEFAULT_OVERSIZE_DRAIN) {
  return (request: IncomingMessage, next: (error?: Error) => void): void => {
    const declared = Number(request.headers['content-length']);
    if (!Number.isFinite(declared) || declared <= limitBytes) {
      next();
      return;
    }
    let received = 0;
    const cut = () => {
      clearTimeout(timer);
      request.socket.destroy();
    };
    const timer = setTimeout(cut, drain.ms).unref();
    request.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (received > drain.bytes) cut();
    });
    request.once('end', () => clearTimeout(timer));
    request.once('close', () => clearTimeout(timer));
    next(new HttpError(413, 'request body is too large'));
  };
}
