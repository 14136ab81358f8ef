/** How the process logs: ARBOR_LOG_LEVEL and ARBOR_LOG_FORMAT. */
export interface LogSettings {
  level: LogLevel;
  format: LogFormat;
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const LOG_FORMATS = ['json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export const DEFAULT_LOG_SETTINGS: LogSettings = { level: 'info', format: 'json' };

/** The log settings in the environment; an unknown level or format is an error naming the variable. */
export function loadLogSettings(env: NodeJS.ProcessEnv): LogSettings {
  return {
    level: oneOf(env, 'ARBOR_LOG_LEVEL', LOG_LEVELS, DEFAULT_LOG_SETTINGS.level),
    format: oneOf(env, 'ARBOR_LOG_FORMAT', LOG_FORMATS, DEFAULT_LOG_SETTINGS.format),
  };
}

function oneOf<T extends string>(env: NodeJS.ProcessEnv, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = raw.toLowerCase() as T;
  if (!allowed.includes(value)) throw new Error(`${name} must be one of ${allowed.join(', ')} (got "${raw}")`);
  return value;
}
