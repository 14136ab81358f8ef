import { Injectable, type PipeTransform } from '@nestjs/common';
import { ApiQuery } from '@nestjs/swagger';
import { HttpError } from '../http/http-error';

/**
 * `?as_of=`: the read models as they stood when the log ended at a position (every event at or
 * before it applied), or at a time (the last event recorded at or before it).
 */
export type AsOf = { position: number } | { time: number };

const POSITION = /^\d+$/;
/** A date, or a date and time with an optional fraction and offset (`Z`, `+02:00`, `+0200`). */
const ISO_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * The `as_of` query parameter: a log position (a whole number) or an ISO 8601 time; absent or empty:
 * the live read models. A date and time without an offset is UTC, and a `+` that arrived as a
 * space (an unencoded `+02:00` in a query string) is read as the `+` it was.
 */
export function parseAsOf(value: unknown): AsOf | undefined {
  if (value === undefined || value === '') return undefined;
  const text = typeof value === 'string' ? value.replace(/ (\d{2}:?\d{2})$/, '+$1') : '';
  if (POSITION.test(text) && Number.isSafeInteger(Number(text))) return { position: Number(text) };
  const date = ISO_TIME.exec(text);
  // Date.parse takes 2026-02-30 for March 2nd: the day must exist in its month.
  if (date && new Date(Date.UTC(Number(date[1]), Number(date[2]) - 1, Number(date[3]))).getUTCDate() === Number(date[3])) {
    const time = Date.parse(/T[\d:.]+$/i.test(text) ? `${text}Z` : text);
    if (!Number.isNaN(time)) return { time };
  }
  throw new HttpError(400, 'Failed to deserialize query string: as_of must be a log position (a whole number) or an ISO 8601 time');
}

@Injectable()
export class AsOfPipe implements PipeTransform<unknown, AsOf | undefined> {
  transform(value: unknown): AsOf | undefined {
    return parseAsOf(value);
  }
}

/** The OpenAPI description of `as_of`, for every endpoint that takes it. */
export const ApiAsOfQuery = () =>
  ApiQuery({
    name: 'as_of',
    required: false,
    type: String,
    description:
      'Answer as of a log position (a whole number: every event up to and including it) or an ISO 8601 time (the last event recorded at or before it); ' +
      'replayed from the log through the same projections. Past the head of the log, or a time in the future: 400.',
  });
