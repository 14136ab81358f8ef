import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { MachineSpec } from '../hypervisor-driver.port';
import type { ProcessIdentity } from './process-identity';

/** What the driver remembers about a machine on disk, so a restarted worker finds it again. */
export interface MachineRecord {
  spec: MachineSpec;
  init: ProcessIdentity;
}

/** VM ids become directory and cgroup names: allow nothing that could escape them. */
const SAFE_VM_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

export function isSafeVmId(vmId: string): boolean {
  return SAFE_VM_ID.test(vmId);
}

/** Paths of one machine under `<stateDir>/<vm_id>/`. */
export class MachineLayout {
  readonly dir: string;
  readonly upper: string;
  readonly work: string;
  readonly merged: string;
  readonly initLog: string;
  private readonly recordFile: string;

  constructor(stateDir: string, readonly vmId: string) {
    if (!isSafeVmId(vmId)) throw new Error(`invalid vm id ${JSON.stringify(vmId)}`);
    this.dir = join(stateDir, vmId);
    this.upper = join(this.dir, 'upper');
    this.work = join(this.dir, 'work');
    this.merged = join(this.dir, 'merged');
    this.initLog = join(this.dir, 'init.log');
    this.recordFile = join(this.dir, 'machine.json');
  }

  async readRecord(): Promise<MachineRecord | null> {
    const text = await readFile(this.recordFile, 'utf8').catch(() => null);
    return text === null ? null : (JSON.parse(text) as MachineRecord);
  }

  async writeRecord(record: MachineRecord): Promise<void> {
    await writeFile(this.recordFile, `${JSON.stringify(record, null, 2)}\n`);
  }
}
