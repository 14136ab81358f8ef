import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { PRIVATE_ONLY, privateHostOf, publicOnlyLookup } from '@arbor/application';

/** One signed POST of a delivery. */
export interface WebhookRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  /** The whole request, answer included, is given up after this long. */
  timeoutMs: number;
  /** Aborts the request (the deliverer stopping). */
  signal?: AbortSignal;
  /** Whether loopback, private and link-local destinations may be called (ARBOR_WEBHOOK_ALLOW_PRIVATE). */
  allowPrivate?: boolean;
}

/** How an attempt went: a 2xx answer, or why not (`status_code` null: no answer came). */
export type WebhookResponse = { ok: true; status_code: number } | { ok: false; status_code: number | null; error: string };

export type SendWebhook = (request: WebhookRequest) => Promise<WebhookResponse>;

/** At most this much of a receiver's answer is read, for the error of a failed attempt. */
export const MAX_ANSWER_BYTES = 2048;

const PRIVATE_HINT = 'set ARBOR_WEBHOOK_ALLOW_PRIVATE=true to deliver to private addresses';
/** The addresses a receiver's name resolves to, without the private ones. */
const publicOnly = publicOnlyLookup(PRIVATE_HINT);

/**
 * POSTs with Node's http/https: a timeout over the whole exchange, redirects not followed (a 3xx
 * is a failure, as Standard Webhooks senders do: the URL registered is the URL called), at most
 * MAX_ANSWER_BYTES of a failed answer read (a successful answer's body is not read at all), and
 * unless allowed, no private destination: a tenant's URL must not make Arbor call the host's own
 * services or its neighbours. The check is on the addresses the connection itself resolves (a
 * `lookup` that drops private ones), so a name cannot resolve to a public address when checked
 * and a private one when connected (DNS rebinding).
 */
export const sendWebhook: SendWebhook = ({ url, headers, body, timeoutMs, signal, allowPrivate = false }) =>
  new Promise<WebhookResponse>((resolve) => {
    const target = new URL(url);
    const privateHost = allowPrivate ? null : privateHostOf(target);
    if (privateHost) return resolve({ ok: false, status_code: null, error: `refused: ${privateHost} (${PRIVATE_HINT})` });

    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const request = send(target, {
      method: 'POST',
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      lookup: allowPrivate ? undefined : publicOnly,
    });
    let settled = false;
    const finish = (result: WebhookResponse) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onStop);
      request.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => finish({ ok: false, status_code: null, error: `no answer within ${timeoutMs} ms` }), timeoutMs);
    const onStop = () => finish({ ok: false, status_code: null, error: 'the deliverer stopped' });
    if (signal?.aborted) return onStop();
    signal?.addEventListener('abort', onStop, { once: true });

    request.on('error', (error: NodeJS.ErrnoException) => {
      finish({ ok: false, status_code: null, error: `request failed: ${error.code === PRIVATE_ONLY ? error.message : (error.code ?? error.message)}` });
    });
    request.on('response', (response: IncomingMessage) => {
      const status = response.statusCode ?? 0;
      if (status >= 200 && status < 300) return finish({ ok: true, status_code: status });
      const location = response.headers.location;
      const redirect = status >= 300 && status < 400 ? ` (redirects are not followed${location ? `: to ${location}` : ''})` : '';
      const chunks: Buffer[] = [];
      let size = 0;
      const failed = () => {
        const answer = Buffer.concat(chunks).subarray(0, MAX_ANSWER_BYTES).toString('utf8').replace(/\s+/g, ' ').trim();
        finish({ ok: false, status_code: status, error: `HTTP ${status}${redirect}${answer ? `: ${answer}` : ''}` });
      };
      response.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.length;
        if (size >= MAX_ANSWER_BYTES) failed();
      });
      response.on('end', failed);
      response.on('error', () => {}); // destroyed by finish: nothing more to say
    });
    request.end(body);
  });
