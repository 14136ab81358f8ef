export interface ApiAnswer {
  status: number;
  /** The parsed JSON body (undefined when empty). */
  json: any;
}

/** JSON calls with one bearer key against an api started as a separate process. */
export function apiClient(baseUrl: string, key: string) {
  return async (method: string, path: string, body?: unknown): Promise<ApiAnswer> => {
    const response = await fetch(baseUrl + path, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, json: text ? JSON.parse(text) : undefined };
  };
}
