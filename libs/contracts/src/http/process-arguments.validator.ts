import { registerDecorator, type ValidationArguments } from 'class-validator';

/**
 * What a process started in a VM can be handed: Linux passes arguments and environment entries
 * to execve as NUL-terminated strings, each at most MAX_ARG_STRLEN (128 KiB with its NUL), all of
 * them within ARG_MAX (2 MiB on a default 8 MiB stack), on the host (the runtime's own command
 * line carries them) and again in the guest. Refused at the edge, before anything is logged.
 */
export const MAX_PROCESS_ARGUMENT_BYTES = 128 * 1024 - 1;
/** Arguments, environment entries and working directory together; half of ARG_MAX leaves the runtime room. */
export const MAX_PROCESS_TOTAL_BYTES = 1024 * 1024;
/** PATH_MAX less its NUL. */
export const MAX_WORKING_DIR_BYTES = 4095;

const bytes = (text: string) => Buffer.byteLength(text, 'utf8');
const NUL = '\0';

/** The fields of an exec request this checks; the rest of the body is not its business. */
interface ProcessRequest {
  command?: unknown;
  env?: unknown;
  working_dir?: unknown;
}

function argumentProblem(name: string, value: string): string | null {
  if (value.includes(NUL)) return `${name} contains a NUL byte, which a process cannot be given`;
  if (bytes(value) > MAX_PROCESS_ARGUMENT_BYTES) return `${name} is ${bytes(value)} bytes; one entry may be at most ${MAX_PROCESS_ARGUMENT_BYTES}`;
  return null;
}

function commandProblem(command: unknown): string | null {
  if (!Array.isArray(command)) return null; // the type check says so
  for (const [index, argument] of command.entries()) {
    const problem = typeof argument === 'string' ? argumentProblem(`command[${index}]`, argument) : null;
    if (problem) return problem;
  }
  return null;
}

function envProblem(env: unknown): string | null {
  if (typeof env !== 'object' || env === null) return null;
  for (const [key, value] of Object.entries(env)) {
    if (key === '' || key.includes('=') || key.includes(NUL)) return `env key ${JSON.stringify(key)} must be non-empty, without '=' or NUL`;
    const problem = typeof value === 'string' ? argumentProblem(`env.${key}`, `${key}=${value}`) : null;
    if (problem) return problem;
  }
  return null;
}

function workingDirProblem(dir: unknown): string | null {
  if (typeof dir !== 'string') return null;
  if (dir.includes(NUL)) return 'working_dir contains a NUL byte, which no path can hold';
  if (bytes(dir) > MAX_WORKING_DIR_BYTES) return `working_dir is ${bytes(dir)} bytes; a path may be at most ${MAX_WORKING_DIR_BYTES}`;
  return null;
}

function totalProblem({ command, env, working_dir }: ProcessRequest): string | null {
  const strings = [
    ...(Array.isArray(command) ? command : []),
    ...(typeof env === 'object' && env !== null ? Object.entries(env).map(([key, value]) => `${key}=${value}`) : []),
    ...(typeof working_dir === 'string' ? [working_dir] : []),
  ];
  const total = strings.reduce((sum, text) => sum + (typeof text === 'string' ? bytes(text) + 1 : 0), 0);
  return total > MAX_PROCESS_TOTAL_BYTES ? `command, env and working_dir together are ${total} bytes; at most ${MAX_PROCESS_TOTAL_BYTES}` : null;
}

const PROBLEMS: Record<'command' | 'env' | 'working_dir', (request: ProcessRequest) => string | null> = {
  // The total is reported on command, the one field every exec has, unless a field is at fault.
  command: (request) =>
    commandProblem(request.command) ?? (envProblem(request.env) ?? workingDirProblem(request.working_dir) ? null : totalProblem(request)),
  env: (request) => envProblem(request.env),
  working_dir: (request) => workingDirProblem(request.working_dir),
};

/** The field (command, env or working_dir) holds only what a process in the VM can be given. */
export function FitsAProcess() {
  return (target: object, propertyName: string) => {
    const problem = PROBLEMS[propertyName as keyof typeof PROBLEMS];
    if (!problem) throw new Error(`FitsAProcess does not check ${propertyName}`);
    registerDecorator({
      name: 'fitsAProcess',
      target: target.constructor,
      propertyName,
      options: { message: (args: ValidationArguments) => problem(args.object as ProcessRequest) ?? '' },
      validator: { validate: (_value: unknown, args: ValidationArguments) => problem(args.object as ProcessRequest) === null },
    });
  };
}
