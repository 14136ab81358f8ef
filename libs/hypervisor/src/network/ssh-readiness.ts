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
 * Waits until an SSH server listens on `address` (on `port`: tests pick their own), from the host:
 * a connection accepted, which the machine's kernel completes only for a listening socket, over
 * the same bridge, port and rules the edge will use. For a machine that has just started its
 * sshd, whose listener loaded its config and host keys before listening. Not its banner: OpenSSH
 * re-executes sshd for each connection, and that child greets 15–25 ms after the listen on this
 * project's hosts, which a client's first connection waits out in the listen backlog anyway.
 * Fails after `timeoutMs`, or at once when `stillAlive` says the machine is gone.
 */
export async function waitUntilSshListens(address: string, timeoutMs: number, stillAlive: () => Promise<boolean> = async () => true, port = SSH_PORT): Promise<void> {
  await waitUntil(timeoutMs, stillAlive, (timeout) => accepted(address, port, timeout), `no SSH server listened on [${address}]:${port}`);
}

/** Where waitUntilAddressAnswers looks: a port nobody uses, then the SSH server's (tests pick their own). */
export interface AnswerPorts {
  unused: number;
  ssh: number;
}

/**
 * Waits until the machine's TCP stack answers on `address`, from the host: a connection to a port
 * nobody uses (tcpmux, 1) refused by the guest's kernel (or accepted, should something listen
 * there); where nothing answers there within half a second (a firewall in the guest that drops
 * all but SSH), a connection its sshd accepts. For a machine restored from memory, whose sshd was
 * captured listening and is checked to run on by its identity step (guest-identity.ts): what is
 * left to see is that its new address is reached. sshd is the second choice only: OpenSSH starts
 * a new sshd for each connection, a fraction of a second of an emulated guest's CPU that the
 * machine's first commands would wait for.
 */
export async function waitUntilAddressAnswers(address: string, timeoutMs: number, ports: AnswerPorts = { unused: UNUSED_PORT, ssh: SSH_PORT }): Promise<void> {
  await waitUntil(timeoutMs, async () => true, (timeout) => answered(address, ports, timeout), `the machine did not answer on [${address}]`);
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
/** How long the unused port may stay silent before sshd's port is tried (a guest's kernel refuses at once). */
const UNUSED_PORT_WAIT_MS = 500;

/** The first line the server sends, or why there is none. */
function sshBanner(address: string, timeoutMs: number): Promise<string> {
  return connectAndSee(address, SSH_PORT, timeoutMs, (socket, done) => socket.once('data', (data) => done(data.toString('latin1').split('\r\n')[0])));
}

/** ANSWERED once the guest accepts or refuses a connection to `ports.unused`, or else accepts one on `ports.ssh`; otherwise why not. */
async function answered(address: string, ports: AnswerPorts, timeoutMs: number): Promise<string> {
  const unused = await connectAndSee(address, ports.unused, Math.min(timeoutMs, UNUSED_PORT_WAIT_MS), (socket, done) => {
    socket.once('connect', () => done(ANSWERED));
    socket.once('error', (error: NodeJS.ErrnoException) => done(error.code === 'ECONNREFUSED' ? ANSWERED : error.message));
  });
  if (unused === ANSWERED) return ANSWERED;
  return accepted(address, ports.ssh, timeoutMs);
}

/** ANSWERED once a connection to `port` is accepted; otherwise why not. */
function accepted(address: string, port: number, timeoutMs: number): Promise<string> {
  return connectAndSee(address, port, timeoutMs, (socket, done) => socket.once('connect', () => done(ANSWERED)));
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
