import { existsSync } from 'node:fs';
import { MachineNotFoundError, MachineStateError, type MachineState } from '../hypervisor-driver.port';
import { isAlive } from '../host/process-identity';
import { isSafeId } from '../host/safe-id';
import { sleep } from '../host/sleep';
import { GuestAgentClient } from './guest-agent-client';
import { QemuMachineLayout, type QemuMachineRecord } from './qemu-machine-layout';
import type { QemuProcess } from './qemu-process';
import { QmpClient } from './qmp-client';

/** QEMU states in which the machine is gone for good (only destroy is left). */
const DEAD_STATUSES = ['internal-error', 'io-error', 'shutdown', 'guest-panicked'];

/** This process's connections to one machine. */
interface Attachment {
  /** The QMP session, opened on first use (and again once it has closed). */
  qmp: Promise<QmpClient> | null;
  /** The guest agent client; it connects, and reconnects, on its own. */
  agent: GuestAgentClient;
  /** Set when this process started the QEMU (it is our child and we reap it). */
  process?: QemuProcess;
}

/** A machine whose QEMU runs, with what an operation on it needs. */
export interface LiveMachine {
  state: 'running' | 'paused';
  layout: QemuMachineLayout;
  record: QemuMachineRecord;
  qmp: QmpClient;
  agent: GuestAgentClient;
}

/**
 * The connections this process holds to the machines of one state directory: a QMP session and a
 * guest agent connection per machine. QEMU serves one client per socket, so they are kept and
 * reused. A machine this process did not start (a restarted worker adopting it) is re-attached
 * lazily: its connections are opened from the sockets in its directory on first use.
 */
export class MachineConnections {
  private readonly attachments = new Map<string, Attachment>();

  constructor(private readonly stateDir: string) {}

  /** A QEMU this process just started for the machine of `layout` (our child: we reap it). */
  launched(layout: QemuMachineLayout, process: QemuProcess): void {
    this.attachments.set(layout.vmId, { qmp: null, agent: new GuestAgentClient(layout.agentSocket), process });
  }

  agent(layout: QemuMachineLayout): GuestAgentClient {
    return this.attachment(layout).agent;
  }

  async qmp(layout: QemuMachineLayout): Promise<QmpClient> {
    const attachment = this.attachment(layout);
    const current = attachment.qmp ? await attachment.qmp.catch(() => null) : null;
    if (current && !current.closed) return current;
    attachment.qmp = QmpClient.connect(layout.qmpSocket);
    return attachment.qmp;
  }

  /** Resolves once the machine's QEMU, if this process started it, has exited and been reaped. */
  exitOf(vm_id: string): Promise<void> | undefined {
    return this.attachments.get(vm_id)?.process?.exited;
  }

  /** Closes the machine's connections and forgets the machine (it is being destroyed). */
  forget(vm_id: string): void {
    const attachment = this.attachments.get(vm_id);
    this.attachments.delete(vm_id);
    if (attachment) close(attachment);
  }

  /** Closes every connection, leaving the machines running; the next use re-attaches. */
  closeAll(): void {
    for (const attachment of this.attachments.values()) close(attachment);
  }

  /** The machine's state: from its record and process, then from QEMU itself over QMP. */
  async status(vm_id: string): Promise<MachineState | null> {
    if (!isSafeId(vm_id)) return null;
    const layout = new QemuMachineLayout(this.stateDir, vm_id);
    if (!existsSync(layout.dir)) return null;
    const record = await layout.readRecord();
    if (!record || !(await isAlive(record.process))) return 'dead';
    let status: string;
    try {
      ({ status } = await (await this.qmp(layout)).execute<{ status: string }>('query-status'));
    } catch (error) {
      // QEMU killed a moment ago: alive at the check above, its QMP socket closed already (the
      // kernel closes a dying process's files before it shows as exited).
      for (let waited = 0; waited < 2000; waited += 20) {
        if (!(await isAlive(record.process))) return 'dead';
        await sleep(20);
      }
      throw error;
    }
    if (status === 'running') return 'running';
    if (DEAD_STATUSES.includes(status)) return 'dead';
    return 'paused'; // paused, postmigrate, inmigrate, finish-migrate, ...
  }

  /** The machine, connected; MachineNotFoundError or MachineStateError (dead) otherwise. */
  async requireLive(vm_id: string): Promise<LiveMachine> {
    const state = await this.status(vm_id);
    if (state === null) throw new MachineNotFoundError(vm_id);
    if (state === 'dead') throw new MachineStateError(vm_id, `machine ${vm_id} is dead`);
    const layout = new QemuMachineLayout(this.stateDir, vm_id);
    const record = (await layout.readRecord())!;
    return { state, layout, record, qmp: await this.qmp(layout), agent: this.agent(layout) };
  }

  private attachment(layout: QemuMachineLayout): Attachment {
    let attachment = this.attachments.get(layout.vmId);
    if (!attachment) {
      attachment = { qmp: null, agent: new GuestAgentClient(layout.agentSocket) };
      this.attachments.set(layout.vmId, attachment);
    }
    return attachment;
  }
}

function close(attachment: Attachment): void {
  attachment.agent.close();
  attachment.qmp?.then((qmp) => qmp.close()).catch(() => undefined);
  attachment.qmp = null;
}
