import type { SnapshotMachineSpec } from '../hypervisor-driver.port';
import { applyGuestIdentity } from './guest-identity';
import type { QemuBaseImage } from './image/qemu-base-image';
import { launchMachine, type GuestNetwork } from './machine-boot';
import type { MachineConnections } from './machine-connections';
import { loadMemory } from './memory-migration';
import { createOverlay } from './qcow2-chain';
import { handToQemu } from './qemu-confinement';
import type { QemuMachineLayout, QemuMachineRecord } from './qemu-machine-layout';
import type { QemuSnapshotRecord, QemuSnapshotStore } from './qemu-snapshot-store';

/**
 * A new machine that resumes where the snapshot's source was: its disk an overlay on the
 * snapshot's layer, its memory loaded into a QEMU of the same shape (`-incoming defer`), then
 * `cont`. File systems frozen by the capture are thawed, and the machine gets the host's time, an
 * identity of its own, so machines from one snapshot never share one, and its own network (its
 * NIC on its own tap; the guest, which woke up with the source's MAC and addresses, takes its
 * own). A snapshot of a machine without a NIC is never restored (see QemuDriver.startFromSnapshot).
 */
export async function restoreMachine(
  connections: MachineConnections,
  snapshots: QemuSnapshotStore,
  layout: QemuMachineLayout,
  image: QemuBaseImage,
  snapshot: QemuSnapshotRecord,
  spec: SnapshotMachineSpec,
  /** Still being made (the host's port and rules) while the disk is: QEMU needs both at its start. */
  networkReady: Promise<GuestNetwork>,
  /** The host's kit helper (arbor-guest.c), which sends the snapshot's memory to QEMU. */
  helper: string,
): Promise<QemuMachineRecord> {
  const { info } = snapshot;
  const disk = layout.layerPath(0);
  await createOverlay(disk, snapshots.diskPath(info.snapshot_id));
  await handToQemu(disk);
  const network = await networkReady;
  const machine = {
    vm_id: spec.vm_id,
    vcpu_count: info.vcpu_count,
    mem_size_mib: info.mem_size_mib,
    fs_size_mib: info.fs_size_mib,
    env: spec.env,
    identity: spec.identity,
    accel: snapshot.accel,
    nic: network.nic,
    network_group: spec.network_group,
    image_id: snapshot.image_id ?? null,
    // The very kit disk the source ran with (its pages may be in the restored memory).
    kit_disk: snapshot.kit_disk ?? null,
    disk,
    next_layer: 1,
    depth: snapshot.depth,
  };
  const record = await launchMachine(connections, layout, image, machine, true);
  const qmp = await connections.qmp(layout);
  await loadMemory(qmp, snapshots.memoryPath(info.snapshot_id), layout.migrationSocket(), record.process, helper);
  await qmp.execute('cont');
  const agent = connections.agent(layout);
  if (snapshot.frozen) await agent.request('guest-fsfreeze-thaw');
  await applyGuestIdentity(agent, spec.identity, spec.env, network.batch);
  return record;
}
