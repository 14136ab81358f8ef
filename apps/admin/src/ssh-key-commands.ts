import { AggregateRepository, newCommandContext, Operations, ProjectionWaiter, type Infrastructure } from '@arbor/application';
import { DomainError, Vm } from '@arbor/domain';
import { VMS_COLLECTION, type VmDocument } from '@arbor/read-models';
import type { AdminOutput } from './admin-output';

/** A VM's generation; documents projected before generations existed have none: theirs is 1. */
const generationOf = (vm: VmDocument) => vm.ssh_key_generation ?? 1;

/**
 * `ssh-keys …`: the SSH key generations every VM's key pair derives from. `rotate` starts a new one
 * for new VMs; `rekey` moves running VMs onto the current one (the worker writes the new public key
 * into the guest's authorized_keys in place of the old); `retire` deletes an old generation's
 * secret once no VM needs it.
 */
export async function sshKeysCommand(infra: Infrastructure, args: string[], options: { vm?: string; force?: boolean }, out: AdminOutput): Promise<void> {
  const generations = infra.secrets.sshGenerations;
  const [action, value] = args;
  switch (action) {
    case 'list': {
      const vms = await liveVms(infra);
      for (const g of await generations.list()) {
        const using = vms.filter((vm) => generationOf(vm) === g.generation).length;
        out.line(`generation ${g.generation}${g.current ? ' (current)' : ''}  created ${g.created_at}${g.retired_at ? `  retired ${g.retired_at}` : ''}  ${using} VM(s)`);
      }
      return;
    }
    case 'rotate': {
      const generation = await generations.rotate();
      out.line(`SSH key generation ${generation} started: VMs made from now on get their key from it; existing VMs keep theirs until re-keyed (ssh-keys rekey)`);
      return;
    }
    case 'rekey':
      return rekey(infra, options.vm, out);
    case 'retire': {
      const generation = Number(value);
      if (!Number.isInteger(generation) || generation < 1) throw new Error('ssh-keys retire <generation>: a generation number is required');
      const using = (await liveVms(infra)).filter((vm) => generationOf(vm) === generation);
      if (using.length && !options.force) {
        throw new Error(
          `${using.length} VM(s) still have a key of generation ${generation} (${using.map((vm) => vm.vm_id).join(', ')}): re-key them first (ssh-keys rekey), ` +
            'or add --force, after which GET ssh_key answers 409 for them until they are re-keyed',
        );
      }
      await generations.retire(generation);
      out.line(`SSH key generation ${generation} retired: its secret is deleted${using.length ? `; ${using.length} VM(s) still had its key` : ''}`);
      return;
    }
    default:
      throw new Error(`unknown command: ssh-keys ${action ?? ''}`.trim());
  }
}

/**
 * Re-keys the running VMs whose key is not of the current generation (or the one `--vm`), one at
 * a time, each waiting for the worker; a VM that cannot be re-keyed now (paused, booting, busy,
 * dead) is reported and left as it is, with its old key still working.
 */
async function rekey(infra: Infrastructure, only: string | undefined, out: AdminOutput): Promise<void> {
  const { generation } = await infra.secrets.sshGenerations.current();
  const aggregates = new AggregateRepository(infra.eventStore, infra.secrets.events);
  const operations = new Operations(aggregates, new ProjectionWaiter(infra.readModels, infra.config.waitTimeoutMs), infra.config.waitTimeoutMs);
  const vms = (await liveVms(infra)).filter((vm) => (only ? vm.vm_id === only : generationOf(vm) !== generation));
  if (only && !vms.length) throw new Error(`no live VM ${only}`);
  let rekeyed = 0;
  for (const vm of vms) {
    try {
      const ssh_public_key = await infra.secrets.vmSshKeys.publicKey(vm.vm_id, generation);
      const context = newCommandContext({ org_id: vm.org_id, actor_key_id: null });
      await operations.run(Vm, vm.vm_id, { type: 'RequestVmSshKeyRotation', ssh_public_key, ssh_key_generation: generation }, context);
      rekeyed++;
      out.line(`vm ${vm.vm_id} (org ${vm.org_id}): re-keyed from generation ${generationOf(vm)} to ${generation}`);
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      out.line(`vm ${vm.vm_id} (org ${vm.org_id}): not re-keyed, still generation ${generationOf(vm)}: ${error.message}`);
    }
  }
  out.line(`${rekeyed} of ${vms.length} VM(s) re-keyed to generation ${generation}`);
}

async function liveVms(infra: Infrastructure): Promise<VmDocument[]> {
  return infra.readModels.find<VmDocument>(VMS_COLLECTION, { deleted_at: null }, { sort: { created_at: 1, _id: 1 } });
}
