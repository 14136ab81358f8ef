import { type ChildProcess, spawn } from 'node:child_process';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { waitUntilAddressAnswers } from './ssh-readiness';

/** A TCP server on 127.0.0.1 counting the connections it accepted. */
async function countingServer(): Promise<{ server: Server; port: number; accepted: () => number }> {
  let accepted = 0;
  const server = createServer((socket) => {
    accepted++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as { port: number }).port, accepted: () => accepted };
}

/** A port nothing listens on (bound, then let go). */
async function closedPort(): Promise<number> {
  const { server, port } = await countingServer();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * A port whose SYNs go unanswered, as behind a firewall that drops them: a listener that never
 * accepts (perl, in every Debian), its short queue filled, so the kernel drops what comes next.
 */
async function droppingPort(): Promise<{ port: number; stop: () => void }> {
  const listener: ChildProcess = spawn('perl', ['-MIO::Socket::INET', '-e', '$|=1; my $s = IO::Socket::INET->new(Listen => 1, LocalAddr => "127.0.0.1", LocalPort => 0) or die $!; print $s->sockport, "\\n"; sleep 60'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = Number(await new Promise<string>((resolve) => listener.stdout!.once('data', (data: Buffer) => resolve(data.toString().trim()))));
  const fillers: Socket[] = [];
  for (let i = 0; i < 4; i++) fillers.push(connect(port, '127.0.0.1').on('error', () => undefined));
  await new Promise((resolve) => setTimeout(resolve, 200));
  return { port, stop: () => (fillers.forEach((socket) => socket.destroy()), listener.kill()) };
}

describe('a restored machine answering on its address', () => {
  it('answers by refusing a port nobody uses, without a connection to its SSH server', async () => {
    const ssh = await countingServer();
    await waitUntilAddressAnswers('127.0.0.1', 5000, { unused: await closedPort(), ssh: ssh.port });
    expect(ssh.accepted()).toBe(0);
    ssh.server.close();
  });

  it('answers through its SSH server when a firewall drops the unused port', async () => {
    const ssh = await countingServer();
    const dropped = await droppingPort();
    try {
      await waitUntilAddressAnswers('127.0.0.1', 5000, { unused: dropped.port, ssh: ssh.port });
      expect(ssh.accepted()).toBe(1);
    } finally {
      dropped.stop();
      ssh.server.close();
    }
  });

  it('fails, saying so, when neither answers in time', async () => {
    const dropped = await droppingPort();
    try {
      await expect(waitUntilAddressAnswers('127.0.0.1', 1500, { unused: dropped.port, ssh: await closedPort() })).rejects.toThrow(
        /the machine did not answer on \[127\.0\.0\.1\] within 1\.5 s/,
      );
    } finally {
      dropped.stop();
    }
  });
});
