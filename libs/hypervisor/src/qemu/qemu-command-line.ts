import type { QemuBaseImage } from './image/qemu-base-image';
import { GUEST_AGENT_PORT } from '../kit/kit-paths';

export type QemuAccel = 'kvm' | 'tcg';

export interface QemuLaunchSpec {
  name: string;
  accel: QemuAccel;
  vcpus: number;
  memMib: number;
  image: QemuBaseImage;
  /** Top qcow2 of the machine's disk chain (relative to QEMU's working directory, or absolute). */
  disk: string;
  /**
   * The guest kit's disk (read-only; the initramfs mounts it at /.arbor). Null only for machines
   * restored from snapshots taken before the kit: their machine had none, and the shapes must match.
   */
  kitDisk: string | null;
  qmpSocket: string;
  agentSocket: string;
  serialLog: string;
  /** The machine's NIC: its host tap and MAC (null: none, as machines had before they had networks). */
  nic?: MachineNic | null;
  /** Start paused, waiting for `migrate-incoming` (restoring a memory snapshot). */
  incoming?: boolean;
}

/** A machine's network card: virtio-net on a persistent tap device the host made (network/). */
export interface MachineNic {
  ifname: string;
  mac: string;
}

/** QMP/QEMU name of the machine's disk: commands such as block_resize and snapshots address it. */
export const DISK_DEVICE = 'disk0';
/** QMP/QEMU name of the guest kit's disk. */
const KIT_DEVICE = 'kit0';

/**
 * The QEMU command line. The machine shape (q35, CPU model, devices and their ids) must be the
 * same for a snapshot's source and every machine restored from it: migration state only loads
 * into an identical machine: a machine with a NIC restores only snapshots of machines with one.
 * The NIC's backend is a tap QEMU opens at start, before it chroots and drops its privileges
 * (no script: the host made and bridged the tap); its MAC is the machine's, though a restore
 * brings back the source's, which the guest then changes (see guest-identity.ts).
 */
export function qemuArguments(spec: QemuLaunchSpec): string[] {
  // Under TCG, tb-size=64 keeps the translation cache (and so QEMU's RSS) small; microvm hangs
  // in about a third of TCG boots, q35 does not.
  const accel = spec.accel === 'kvm' ? ['-accel', 'kvm', '-cpu', 'host'] : ['-accel', 'tcg,tb-size=64', '-cpu', 'max'];
  return [
    '-name', spec.name,
    '-M', 'q35',
    ...accel,
    '-smp', String(spec.vcpus),
    '-m', `${spec.memMib}M`,
    '-nodefaults', '-no-user-config', '-nographic', '-no-reboot',
    '-kernel', spec.image.kernel,
    '-initrd', spec.image.initrd,
    '-append', 'console=ttyS0 root=/dev/vda rw panic=-1 quiet',
    '-serial', `file:${spec.serialLog}`,
    ...(spec.nic
      ? ['-netdev', `tap,id=net0,ifname=${spec.nic.ifname},script=no,downscript=no`, '-device', `virtio-net-pci,netdev=net0,id=nic0,mac=${spec.nic.mac}`]
      : ['-nic', 'none']),
    '-drive', `file=${spec.disk},if=none,id=${DISK_DEVICE},format=qcow2,cache=writeback`,
    '-device', `virtio-blk-pci,drive=${DISK_DEVICE},id=vda`,
    // Opened once at start, read-only, never reopened (no write access to hand over at a migration).
    ...(spec.kitDisk
      ? ['-drive', `file=${spec.kitDisk},if=none,id=${KIT_DEVICE},format=raw,readonly=on`, '-device', `virtio-blk-pci,drive=${KIT_DEVICE},id=vdb`]
      : []),
    '-chardev', `socket,id=qmp,path=${spec.qmpSocket},server=on,wait=off`,
    '-mon', 'chardev=qmp,mode=control',
    '-chardev', `socket,id=agent,path=${spec.agentSocket},server=on,wait=off`,
    '-device', 'virtio-serial-pci,id=serial0',
    '-device', `virtserialport,bus=serial0.0,chardev=agent,name=${GUEST_AGENT_PORT}`,
    ...(spec.incoming ? ['-incoming', 'defer'] : []),
  ];
}
