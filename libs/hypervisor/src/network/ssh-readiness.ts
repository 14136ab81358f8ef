import { connect } from 'node:net';
import { sleep } from '../host/sleep';

/** The port the images' sshd listens on (what GET /vm/{id}/ssh_key reports as ssh_port). */
export const SSH_PORT = 22;

/** How long a new machine's sshd may take to answer from the host: milliseconds alone, seconds on a loaded host or under TCG. */
export const SSH_ANSWER_TIMEOUT_MS = 60_000;

/**
 * Waits until an SSH server greets on `address` (its banner, `SSH-2.0-…`), from the host, the way
 * the edge will connect: a machine counts as up only once it can be reached. Fails after
 * `timeoutMs`, or at once when `stillAlive` says the machine is gone.
 */
export async function waitUntilSshAnswers(address: string, timeoutMs: number, stillAlive: () => Promise<boolean> = async () => true): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  for (let attempt = 0; ; attempt++) {
    const answer = await sshBanner(address, Math.max(100, Math.min(2000, deadline - Date.now())));
    if (answer.startsWith('SSH-')) return;
    last = answer;
    if (Date.now() >= deadline) throw new Error(`no SSH server answered on [${address}]:${SSH_PORT} within ${timeoutMs / 1000} s (${last})`);
    if (!(await stillAlive())) throw new Error(`the machine stopped before its SSH server answered on [${address}]:${SSH_PORT}`);
    await sleep(attempt < 50 ? 10 : 100);
  }
}

/** The first line the server sends, or why there is none. */
function sshBanner(address: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host: address, port: SSH_PORT });
    const done = (answer: string) => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(timeoutMs, () => done('timed out'));
    socket.once('data', (data) => done(data.toString('latin1').split('\r\n')[0]));
    socket.once('error', (error) => done(error.message));
    socket.once('end', () => done('closed without a greeting'));
  });
}
