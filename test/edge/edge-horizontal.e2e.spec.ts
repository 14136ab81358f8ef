import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Socket } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { InMemoryDriver } from '@arbor/hypervisor';
import { startTestArbor, type TestArbor } from '../support/arbor-harness';
import { distEntry, freePort, startProcess, stopProcess, waitForOutput, type RunningProcess } from '../support/processes';
import { describeUnless, rootReason } from '../support/skip-unless';
import { fakeSsh, FAKE_SSH_BANNER, VmAddressServices } from '../support/vm-address-services';

const DOMAIN = 'horizontal.test';

/** Resolves with what the socket sent once `pattern` shows up; rejects if it closes first. */
function readUntil(socket: Socket, pattern: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (data: Buffer) => {
      text += data.toString('latin1');
      if (pattern.test(text)) {
        socket.off('data', onData);
        resolve(text);
      }
    };
    socket.on('data', onData);
    socket.once('close', () => reject(new Error(`closed before ${pattern}; got ${JSON.stringify(text)}`)));
  });
}

const closed = (socket: Socket) => new Promise<void>((resolve) => (socket.destroyed ? resolve() : socket.once('close', () => resolve())));

/**
 * Horizontal edges: two edge processes (the built `npm run start:edge`), started beside the
 * embedded service on its data directory, hold no state of their own: both route the same VM,
 * with certificates of the one CA in the data directory, and both end its connections within a
 * second of its deletion, learning it from the log as the embedded edge does.
 */
describeUnless(rootReason)('two edge processes, stateless, side by side', () => {
  let arbor: TestArbor;
  let vm: VmAddressServices | undefined;
  const edges: { process: RunningProcess; tlsPort: number }[] = [];

  beforeAll(async () => {
    arbor = await startTestArbor({ driver: new InMemoryDriver(), env: { ARBOR_EDGE_DOMAIN: DOMAIN } });
    for (let i = 0; i < 2; i++) {
      const tlsPort = await freePort();
      const process = startProcess(distEntry('edge'), { ARBOR_DATA_DIR: arbor.config.dataDir, ARBOR_EDGE_DOMAIN: DOMAIN, EDGE_PORT: String(tlsPort), EDGE_HTTP_PORT: 'off' });
      edges.push({ process, tlsPort });
      await waitForOutput(process, new RegExp(`arbor edge: TLS on port ${tlsPort}`));
    }
  }, 120_000);
  afterAll(async () => {
    await Promise.all(edges.map((edge) => stopProcess(edge.process)));
    await vm?.close();
    await arbor?.destroy();
  });

  const sshThrough = (tlsPort: number, servername: string, ca: string) =>
    new Promise<TLSSocket>((resolve, reject) => {
      const socket = tlsConnect({ host: '127.0.0.1', port: tlsPort, servername, ca, rejectUnauthorized: true });
      socket.once('secureConnect', () => resolve(socket));
      socket.once('error', reject);
    });

  it('both route one VM with certificates of the shared CA, and both drop it within a second of its deletion', async () => {
    const vm_id = await arbor.bootVm();
    const { ip } = (await arbor.request('GET', `/api/v1/vm/${vm_id}/metadata`)).json;
    vm = VmAddressServices.add(ip);
    await vm.listen(22, fakeSsh);
    const name = `${vm_id}.vm.${DOMAIN}`;
    const ca = readFileSync(join(arbor.config.dataDir, 'edge', `ca-vm.${DOMAIN}.crt`), 'utf8');

    const sessions: TLSSocket[] = [];
    for (const { tlsPort } of edges) {
      const session = await sshThrough(tlsPort, name, ca); // verified against the one CA: both edges hold its certificate
      session.write('SSH-2.0-probe\r\n');
      expect(await readUntil(session, /echo:SSH-2\.0-probe/)).toContain(FAKE_SSH_BANNER);
      sessions.push(session);
    }
    expect(vm.connections).toBe(2);

    const gone = sessions.map(closed);
    expect((await arbor.request('DELETE', `/api/v1/vm/${vm_id}`)).status).toBe(200);
    const deadline = new Promise((_, reject) => setTimeout(() => reject(new Error('an edge kept the connection a second after the deletion')), 1000));
    await Promise.race([Promise.all(gone), deadline]);

    // New connections through either edge are refused: the VM does not exist any more.
    for (const { tlsPort } of edges) {
      const again = await sshThrough(tlsPort, name, ca);
      again.write('SSH-2.0-probe\r\n');
      expect(await readUntil(again, /does not exist/)).toMatch(new RegExp(`arbor edge: vm ${vm_id} does not exist`));
      await closed(again);
    }
  });
});
