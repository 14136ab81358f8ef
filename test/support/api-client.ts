export interface ApiAnswer {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed JSON body, or undefined when the body is empty or not JSON. */
  json: any;
}

export interface RequestOptions {
  /** The bearer key: the client's own unless given; null sends none. */
  key?: string | null;
  /** Sent as JSON (with its content-type). */
  body?: unknown;
  /** Sent as it is, for bodies that are not valid JSON. */
  rawBody?: string;
  headers?: Record<string, string>;
}

/** HTTP calls against a running api, as a client makes them, with a default bearer key. */
export function httpClient(baseUrl: string, defaultKey: string | null) {
  return async (method: string, path: string, options: RequestOptions = {}): Promise<ApiAnswer> => {
    const headers: Record<string, string> = { ...options.headers };
    const key = options.key === undefined ? defaultKey : options.key;
    if (key) headers.authorization = `Bearer ${key}`;
    let body = options.rawBody;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] = 'application/json';
    }
    const response = await fetch(baseUrl + path, { method, headers, body });
    const text = await response.text();
    let json: any;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: response.status, headers: response.headers, text, json };
  };
}

/** JSON calls with one bearer key: `call(method, path, body?)`. */
export function apiClient(baseUrl: string, key: string) {
  const request = httpClient(baseUrl, key);
  return (method: string, path: string, body?: unknown): Promise<ApiAnswer> => request(method, path, { body });
}
