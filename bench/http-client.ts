import { type Agent, request } from 'node:http';

/** One request with Node's own HTTP client (far cheaper per request than fetch), its body read whole as text. */
export function httpText(
  agent: Agent,
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string; onText?: (text: string) => void } = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { agent, method: options.method ?? 'GET', headers: options.headers }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        body += chunk;
        options.onText?.(body);
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      response.on('error', reject);
    });
    outgoing.on('error', reject);
    outgoing.end(options.body);
  });
}
