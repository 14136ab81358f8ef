import { maxHeaderSize } from 'node:http';
import type { Duplex } from 'node:stream';

/** How long a refused connection may go on sending what it had started before it is cut. */
const DRAIN_MS = 10_000;

const answer = (status: string, body = '') =>
  `HTTP/1.1 ${status}\r\n${body ? 'Content-Type: application/json; charset=utf-8\r\n' : ''}Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;

/**
 * A request line and headers over Node's limit (16 KiB: a megabyte-long id in the path, say) are
 * answered 431 with the error envelope, and what the client still sends is read and dropped until
 * it is done. Node's own answer destroys the socket at once, and a client still sending its long
 * request gets a reset in place of the 431 (seen on a loaded host as no answer at all). Other
 * malformed requests keep Node's answers (408 for a request too slow to come, else 400). It is the
 * server's one 'clientError' handler (Fastify's clientErrorHandler).
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  socket.on('error', () => undefined);
  if (error.code === 'HPE_HEADER_OVERFLOW' && socket.writable) {
    const body = JSON.stringify({ error: `the request line and headers must be at most ${maxHeaderSize} bytes together`, success: false });
    socket.resume();
    socket.end(answer('431 Request Header Fields Too Large', body));
    setTimeout(() => socket.destroy(), DRAIN_MS).unref();
    return;
  }
  if (socket.writable) socket.write(answer(error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? '408 Request Timeout' : '400 Bad Request'));
  socket.destroy(error);
}
