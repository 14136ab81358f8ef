import { connect, type Socket } from 'node:net';
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
  await waitUntil(timeoutMs, stillAlive, (timeout) => sshBanner(address, timeout), `no SSH server answered on [${address}]:${SSH_PORT}`);
}

/**
 * Waits until the machine's TCP stack answers on `address`, from the host: a connection to a port
 * nobody uses (tcpmux, 1) refused by the guest's kernel (or accepted, should something listen there).
 * For a machine restored from memory, whose sshd was captured listening and is checked to run on
 * by its identity step (guest-identity.ts): what is left to see is that its new address is
 * reached. A connection to sshd would also do, but OpenSSH starts a new sshd for each one, a
 * fraction of a second of an emulated guest's CPU that the machine's first commands would wait for.
 */
export async function waitUntilAddressAnswers(address: string, timeoutMs: number): Promise<void> {
  await waitUntil(timeoutMs, async () => true, (timeout) => answered(address, timeout), `the machine did not answer on [${address}]`);
}

async function waitUntil(timeoutMs: number, stillAlive: () => Promise<boolean>, probe: (timeoutMs: number) => Promise<string>, failure: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  for (let attempt = 0; ; attempt++) {
    const answer = await probe(Math.max(100, Math.min(2000, deadline - Date.now())));
    if (answer.startsWith('SSH-') || answer === ANSWERED) return;
    last = answer;
    if (Date.now() >= deadline) throw new Error(`${failure} within ${timeoutMs / 1000} s (${last})`);
    if (!(await stillAlive())) throw new Error(`the machine stopped: ${failure}`);
    await sleep(attempt < 50 ? 10 : 100);
  }
}

const ANSWERED = 'answered';
/** A port no image's service is expected on (tcpmux). */
const UNUSED_PORT = 1;

/** The first line the server sends, or why there is none. */
function sshBanner(address: string, timeoutMs: number): Promise<string> {
  return connectAndSee(address, SSH_PORT, timeoutMs, (socket, done) => socket.once('data', (data) => done(data.toString('latin1').split('\r\n')[0])));
}

/** ANSWERED once the guest accepts or refuses a connection to UNUSED_PORT, or why neither happened. */
function answered(address: string, timeoutMs: number): Promise<string> {
  return connectAndSee(address, UNUSED_PORT, timeoutMs, (socket, done) => {
    socket.once('connect', () => done(ANSWERED));
    socket.once('error', (error: NodeJS.ErrnoException) => done(error.code === 'ECONNREFUSED' ? ANSWERED : error.message));
  });
}

function connectAndSee(address: string, port: number, timeoutMs: number, watch: (socket: Socket, done: (answer: string) => void) => void): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host: address, port });
    const done = (answer: string) => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(timeoutMs, () => done('timed out'));
    watch(socket, done);
    socket.once('error', (error) => done(error.message));
    socket.once('end', () => done('closed without a greeting'));
  });
}
