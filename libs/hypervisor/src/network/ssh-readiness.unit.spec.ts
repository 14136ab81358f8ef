import { type ChildProcess, spawn } from 'node:child_process';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { waitUntilAddressAnswers, waitUntilSshListens } from './ssh-readiness';

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

describe('a new machine whose sshd listens', () => {
  it('is up once a connection is accepted, greeting or not (the banner is the per-connection child\'s)', async () => {
    const silent = await countingServer(); // accepts, sends nothing
    await waitUntilSshListens('127.0.0.1', 5000, undefined, silent.port);
    expect(silent.accepted()).toBe(1);
    silent.server.close();
  });

  it('keeps trying while the port refuses, and is up once something listens there', async () => {
    const port = await closedPort();
    const later = createServer((socket) => socket.destroy());
    setTimeout(() => later.listen(port, '127.0.0.1'), 150);
    try {
      await waitUntilSshListens('127.0.0.1', 5000, undefined, port);
      expect(later.listening).toBe(true);
    } finally {
      later.close();
    }
  });

  it('fails, saying so, when nothing listens in time, and at once when the machine is gone', async () => {
    const port = await closedPort();
    await expect(waitUntilSshListens('127.0.0.1', 300, undefined, port)).rejects.toThrow(new RegExp(`no SSH server listened on \\[127\\.0\\.0\\.1\\]:${port} within 0\\.3 s`));
    // Gone: it stops asking (a wait for the whole ten minutes would fail this test on its timeout).
    await expect(waitUntilSshListens('127.0.0.1', 600_000, async () => false, port)).rejects.toThrow(/the machine stopped/);
  }, 20_000);
});
