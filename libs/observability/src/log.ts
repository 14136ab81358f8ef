import pino, { type DestinationStream, type Logger } from 'pino';
import pretty from 'pino-pretty';
import { currentLogContext } from './log-context';
import type { LogSettings } from './log-settings';

/** A structured logger (pino): `log.info('message')`, `log.warn({ field }, 'message')`, `log.child({ component })`. */
export type Log = Logger;

/**
 * Field names whose values are never written, wherever they appear in a line's fields (a second
 * line of defence: code logs no secret in the first place).
 */
const SECRET_FIELDS = ['authorization', 'api_key', 'key', 'secret', 'private_key', 'ssh_private_key', 'password', 'token', 'stdin', 'env'];
const REDACT_PATHS = SECRET_FIELDS.flatMap((field) => [field, `*.${field}`]);

/**
 * The process's logger: one JSON object a line on stdout (`ARBOR_LOG_FORMAT=json`, the default),
 * or readable lines for a terminal (`pretty`), at `ARBOR_LOG_LEVEL` and above. Each line carries
 * the log context of the code that wrote it (see withLogContext): the correlation id of the
 * request or event being handled. Writes are synchronous, so the last lines before a crash or an
 * exit are not lost.
 */
export function createLog(settings: LogSettings, destination?: DestinationStream): Log {
  const json = settings.format === 'json';
  const stream = destination ?? (json ? pino.destination({ dest: 1, sync: true }) : pretty({ sync: true, colorize: Boolean(process.stdout.isTTY), translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' }));
  return pino(
    {
      level: settings.level,
      timestamp: pino.stdTimeFunctions.isoTime,
      // Level names ("warn"), not pino's numbers: what log tools and people read.
      formatters: json ? { level: (label) => ({ level: label }) } : {},
      mixin: () => currentLogContext() ?? {},
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    },
    stream,
  );
}

/** A logger that writes nothing (tests, benchmarks, and code given no logger). */
export const silentLog: Log = pino({ level: 'silent' });

/** For code that reports progress as plain lines (the drivers, opening the stores): each line an info line of `log`. */
export function infoLines(log: Log): (line: string) => void {
  return (line) => log.info(line);
}
