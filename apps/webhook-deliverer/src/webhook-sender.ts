/** One signed POST of a delivery. */
export interface WebhookRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  /** The whole request, answer included, is given up after this long. */
  timeoutMs: number;
  /** Aborts the request (the deliverer stopping). */
  signal?: AbortSignal;
}

/** How an attempt went: a 2xx answer, or why not (`status_code` null: no answer came). */
export type WebhookResponse = { ok: true; status_code: number } | { ok: false; status_code: number | null; error: string };

export type SendWebhook = (request: WebhookRequest) => Promise<WebhookResponse>;

/** At most this much of a receiver's answer is read, for the error of a failed attempt. */
export const MAX_ANSWER_BYTES = 2048;

/**
 * POSTs with Node's fetch: a timeout over the whole exchange, redirects not followed (a 3xx is
 * a failure, as Standard Webhooks senders do: the URL registered is the URL called), and at most
 * MAX_ANSWER_BYTES of a failed answer read; a successful answer's body is not read at all.
 */
export const sendWebhook: SendWebhook = async ({ url, headers, body, timeoutMs, signal }) => {
  // One controller a request, for the timeout and the deliverer stopping: AbortSignal.any over the
  // long-lived stop signal would keep every request's signal alive on some Node 20 releases.
  const request = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    request.abort();
  }, timeoutMs);
  const onStop = () => request.abort();
  signal?.addEventListener('abort', onStop, { once: true });
  try {
    const response = await fetch(url, { method: 'POST', headers, body, redirect: 'manual', signal: request.signal });
    if (response.status >= 200 && response.status < 300) {
      await response.body?.cancel();
      return { ok: true, status_code: response.status };
    }
    const answer = await readAtMost(response, MAX_ANSWER_BYTES);
    const location = response.headers.get('location');
    const redirect = response.status >= 300 && response.status < 400 ? ` (redirects are not followed${location ? `: to ${location}` : ''})` : '';
    return { ok: false, status_code: response.status, error: `HTTP ${response.status}${redirect}${answer ? `: ${answer}` : ''}` };
  } catch (error) {
    if (timedOut) return { ok: false, status_code: null, error: `no answer within ${timeoutMs} ms` };
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    return { ok: false, status_code: null, error: `request failed: ${cause?.code ?? cause?.message ?? (error as Error).message}` };
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onStop);
  }
};

/** The start of a body as one line of text: at most `max` bytes are read, the rest is left unread. */
async function readAtMost(response: Response, max: number): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < max) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  const text = Buffer.concat(chunks).subarray(0, max).toString('utf8');
  return text.replace(/\s+/g, ' ').trim();
}
