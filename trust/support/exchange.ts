/** One HTTP exchange as the trust suite makes it: any body, any header, and a bounded wait for the answer. */

export interface ExchangeRequest {
  method: string;
  /** Path and query, already encoded. */
  target: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Give up on an answer (headers) after this long: the request is reported as unanswered. */
  answerTimeoutMs?: number;
}

export interface Exchange {
  /** null: no answer came (the connection failed, or nothing within the timeout). */
  status: number | null;
  /** Why no answer came. */
  failure?: string;
  /** The body as far as it was read (a stream that does not end is read for a moment, then dropped). */
  text: string;
  json: any;
  ms: number;
}

/** How much of a body is read, and for how long once the answer's headers are in. */
const MAX_BODY_BYTES = 256 * 1024;
const BODY_READ_MS = 2000;

export async function exchange(baseUrl: string, request: ExchangeRequest): Promise<Exchange> {
  const started = Date.now();
  const abort = new AbortController();
  const answerTimer = setTimeout(() => abort.abort(new Error('no answer in time')), request.answerTimeoutMs ?? 120_000);
  let response: Response;
  try {
    response = await fetch(baseUrl + request.target, { method: request.method, headers: request.headers, body: request.body, signal: abort.signal });
  } catch (error) {
    clearTimeout(answerTimer);
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    return { status: null, failure: cause?.code ?? cause?.message ?? (error as Error).message, text: '', json: undefined, ms: Date.now() - started };
  }
  clearTimeout(answerTimer);
  const chunks: Buffer[] = [];
  let size = 0;
  const reader = response.body?.getReader();
  if (reader) {
    const stopReading = setTimeout(() => void reader.cancel().catch(() => undefined), BODY_READ_MS);
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        chunks.push(Buffer.from(value));
        size += value.length;
        if (size >= MAX_BODY_BYTES) break;
      }
    } catch {
      // cut off by the read timer or the server: what came is kept
    } finally {
      clearTimeout(stopReading);
      await reader.cancel().catch(() => undefined);
    }
  }
  const text = Buffer.concat(chunks).toString('utf8');
  let json: any;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: response.status, text, json, ms: Date.now() - started };
}

/** `?a=1&b=2` of a query map (empty when there is none). */
export function queryString(query: Record<string, string>): string {
  const entries = Object.entries(query);
  return entries.length === 0 ? '' : `?${new URLSearchParams(entries).toString()}`;
}
