import { fork } from 'node:child_process';

/**
 * Runs `file` again in a process of its own with `flag` (where answerInChildProcess takes over),
 * sends it `request` and resolves to its answer: bench clients that must not share the event loop
 * of the service they measure. Rejects with the child's error, or if it exits without an answer.
 */
export function askChildProcess<Answer>(file: string, flag: string, request: unknown): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const child = fork(file, [flag], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    child.once('message', (message: { answer?: Answer; error?: string }) => {
      child.kill();
      if (message.error !== undefined) reject(new Error(message.error));
      else resolve(message.answer as Answer);
    });
    child.once('exit', (code) => reject(new Error(`the child process (${flag}) exited (${code}) without an answer`)));
    child.send(request as object);
  });
}

/** In the child askChildProcess started with `flag`: answers its one request with `handle`. */
export function answerInChildProcess<Request, Answer>(flag: string, handle: (request: Request) => Promise<Answer>): void {
  if (!process.argv.includes(flag)) return;
  process.once('message', (request: Request) => {
    handle(request).then(
      (answer) => process.send!({ answer }),
      (error: Error) => process.send!({ error: error.message }),
    );
  });
}
