import { randomUUID } from 'node:crypto';
import { AggregateRepository, newCommandContext } from '@arbor/application';
import { Vm, VM_CONFIG_DEFAULTS, type VmCommand } from '@arbor/domain';
import type { EventStore } from '@arbor/event-store';

/** The commands of one VM's life as the api and the worker give them: 9 events. */
function lifecycle(vm_id: string, org_id: string, labels: Record<string, string> | null): VmCommand[] {
  const now = () => new Date().toISOString();
  return [
    { type: 'RequestVmCreation', vm_id, org_id, owner_id: org_id, config: VM_CONFIG_DEFAULTS, labels, env: {}, ip: 'fd00::1', now: now() },
    { type: 'RecordVmBooted', driver: 'memory', now: now() },
    { type: 'SetVmLabels', labels: { step: 'labelled' } },
    { type: 'RequestVmStateChange', target: 'Paused' },
    { type: 'RecordVmPaused' },
    { type: 'RequestVmStateChange', target: 'Running' },
    { type: 'RecordVmResumed' },
    { type: 'RequestVmDeletion' },
    { type: 'RecordVmDeleted', now: now() },
  ];
}

export const EVENTS_PER_VM = 9;

/**
 * Appends whole VM lives to the log through the domain (each command decided on its stream),
 * `vms` of them for each org in turn, so the orgs' events interleave. Returns the VM ids.
 */
export async function appendVmLives(store: EventStore, orgs: string[], vms: number, options: { labels?: Record<string, string> } = {}): Promise<string[]> {
  const aggregates = new AggregateRepository(store);
  const ids: string[] = [];
  for (let i = 0; i < vms; i++) {
    for (const org_id of orgs) {
      const vm_id = randomUUID();
      ids.push(vm_id);
      for (const command of lifecycle(vm_id, org_id, options.labels ?? null)) {
        await aggregates.handle(Vm, vm_id, command, newCommandContext({ org_id, actor_key_id: null }));
      }
    }
  }
  return ids;
}

/** Only the creation of a VM of `org_id` (one event); returns its id. */
export async function appendVmCreation(store: EventStore, org_id: string): Promise<string> {
  const vm_id = randomUUID();
  await new AggregateRepository(store).handle(Vm, vm_id, lifecycle(vm_id, org_id, null)[0], newCommandContext({ org_id, actor_key_id: null }));
  return vm_id;
}
