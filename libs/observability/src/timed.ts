import type { Histogram } from 'prom-client';

/**
 * Runs `work` and observes how long it took in `histogram` under `labels` plus `result`: "ok", or
 * what `failure` calls the error (a bounded set of words, never the message).
 */
export async function timed<L extends string, T>(
  histogram: Histogram<L | 'result'>,
  labels: Partial<Record<L, string>>,
  work: () => Promise<T>,
  failure: (error: unknown) => string = () => 'error',
): Promise<T> {
  const end = histogram.startTimer(labels as Partial<Record<L | 'result', string>>);
  try {
    const result = await work();
    end({ result: 'ok' } as Partial<Record<L | 'result', string>>);
    return result;
  } catch (error) {
    end({ result: failure(error) } as Partial<Record<L | 'result', string>>);
    throw error;
  }
}
