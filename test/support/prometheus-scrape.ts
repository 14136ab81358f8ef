/** One sample of Prometheus' text format: `name{label="value",…} number`. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Scrape {
  samples: Sample[];
  /** The sum of the samples of `name` whose labels include every one of `labels` (0 when none). */
  value(name: string, labels?: Record<string, string>): number;
  /** The samples of `name` whose labels include every one of `labels`. */
  matching(name: string, labels?: Record<string, string>): Sample[];
}

/** GET /metrics as Prometheus scrapes it, parsed. Throws unless it answers 200 in the text format. */
export async function scrapeMetrics(url: string, headers: Record<string, string> = {}): Promise<Scrape> {
  const response = await fetch(url, { headers });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${url} answered ${response.status}: ${text}`);
  if (!/^text\/plain; version=0\.0\.4/.test(response.headers.get('content-type') ?? '')) throw new Error(`${url}: not the text format (${response.headers.get('content-type')})`);
  return parseMetrics(text);
}

export function parseMetrics(text: string): Scrape {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[key] = value.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    samples.push({ name: match[1], labels, value: Number(match[3]) });
  }
  const matching = (name: string, labels: Record<string, string> = {}) =>
    samples.filter((s) => s.name === name && Object.entries(labels).every(([key, value]) => s.labels[key] === value));
  return { samples, matching, value: (name, labels) => matching(name, labels).reduce((sum, s) => sum + s.value, 0) };
}
