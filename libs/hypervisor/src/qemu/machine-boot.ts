import type { MachineSpec } from '../hypervisor-driver.port';
import { isAlive } from '../host/process-identity';
import { applyGuestIdentity } from './guest-identity';
import type { QemuBaseImage } from './image/qemu-base-image';
import type { MachineConnections } from './machine-connections';
import { confinementArguments, nameInsideQemu } from './qemu-confinement';
import { qemuArguments, type MachineNic, type QemuAccel } from './qemu-command-line';
import type { QemuMachineLayout, QemuMachineRecord } from './qemu-machine-layout';
import { launchQemu } from './qemu-process';

/** Boots under TCG take ~6.5 s alone and much longer when several share 2 cores. */
const BOOT_TIMEOUT_MS = 180_000;

/**
 * Starts the QEMU of a machine (paused and waiting for a memory stream when `incoming`), records
 * it with its process, so a restarted worker finds and re-attaches it, and hands the process to
 * `connections`.
 */
export async function launchMachine(
  connections: MachineConnections,
  layout: QemuMachineLayout,
  image: QemuBaseImage,
  machine: Omit<QemuMachineRecord, 'process'>,
  incoming = false,
): Promise<QemuMachineRecord> {
  const args = qemuArguments({
    name: `arbor-${machine.vm_id}`,
    accel: machine.accel,
    vcpus: machine.vcpu_count,
    memMib: machine.mem_size_mib,
    image,
    disk: nameInsideQemu(layout.dir, machine.disk),
    kitDisk: machine.kit_disk ?? null,
    qmpSocket: layout.qmpSocket,
    agentSocket: layout.agentSocket,
    serialLog: layout.serialLog,
    nic: machine.nic ?? null,
    incoming,
  });
  const qemu = await launchQemu([...args, ...confinementArguments(layout.dir)], layout.qemuLog, layout.qmpSocket, layout.dir);
  const record: QemuMachineRecord = { ...machine, process: qemu.identity };
  await layout.writeRecord(record);
  connections.launched(layout, qemu);
  return record;
}

/** A machine's network as its guest needs it: its NIC, and the `ip -batch` lines that configure it. */
export interface GuestNetwork {
  nic: MachineNic;
  batch: string;
}

/**
 * A new machine on its first disk layer (an overlay of its image the driver made, of the machine's
 * disk size), booted with Arbor's kernel, initramfs and the current guest kit until its guest agent
 * answers, then given the host's time, its identity and its network. The guest kit's init grows
 * the file system to the disk at boot.
 */
export async function bootMachine(
  connections: MachineConnections,
  layout: QemuMachineLayout,
  image: QemuBaseImage,
  spec: MachineSpec,
  accel: QemuAccel,
  network: GuestNetwork,
): Promise<QemuMachineRecord> {
  const { fs_size_mib } = spec;
  const disk = layout.layerPath(0);
  const record = await launchMachine(connections, layout, image, {
    vm_id: spec.vm_id,
    vcpu_count: spec.vcpu_count,
    mem_size_mib: spec.mem_size_mib,
    fs_size_mib,
    env: spec.env,
    identity: spec.identity,
    accel,
    nic: network.nic,
    network_group: spec.network_group,
    image_id: spec.image_id ?? null,
    kit_disk: image.kit_disk,
    disk,
    next_layer: 1,
    depth: 0,
  });
  const agent = connections.agent(layout);
  await agent.waitUntilReady(BOOT_TIMEOUT_MS, () => isAlive(record.process));
  await applyGuestIdentity(agent, spec.identity, spec.env, network.batch);
  return record;
}
