import { AggregateRepository, newCommandContext, PROJECTOR_CHECKPOINT } from '@arbor/application';
import { Commit, Exec, Tag, Vm, VM_CONFIG_DEFAULTS } from '@arbor/domain';
import type { ReadModelStore } from '@arbor/read-models';
import { ALL_PROJECTIONS } from '../projections';

const org_id = 'org-1';
const now = '2026-11-23T10:00:00.000Z';
const context = () => newCommandContext({ org_id, actor_key_id: 'key-1' });
export const id = (kind: number, n: number) => `${kind}${kind}${kind}${kind}${kind}${kind}${kind}${kind}-1111-4111-8111-${String(n).padStart(12, '0')}`;

/** A log with a chain of commits (each projected from its parent's ancestors), tags, exec output and deletions. */
export async function writeHistory(aggregates: AggregateRepository): Promise<void> {
  let parent: { commit_id: string; vm_id: string } | null = null;
  for (let n = 0; n < 6; n++) {
    const vm_id = id(1, n);
    await aggregates.handle(Vm, vm_id, {
      type: 'RequestVmCreation', vm_id, org_id, owner_id: 'key-1', config: VM_CONFIG_DEFAULTS, labels: null, env: {}, ip: `fd00::${n}`,
      parent_commit_id: parent?.commit_id ?? null, grandparent_vm_id: parent?.vm_id ?? null, now,
    }, context());
    await aggregates.handle(Vm, vm_id, { type: 'RecordVmBooted', driver: 'memory', now }, context());
    await aggregates.handle(Vm, vm_id, { type: 'SetVmLabels', labels: { n: String(n) } }, context());
    const exec_id = id(3, n);
    await aggregates.handle(Exec, exec_id, { type: 'RequestExec', exec_id, vm_id, org_id, command: ['true'], env: null, working_dir: null, stdin: null, timeout_secs: 0, now }, context());
    await aggregates.handle(Exec, exec_id, { type: 'RecordExecStarted', now }, context());
    await aggregates.handle(Exec, exec_id, { type: 'RecordExecOutput', chunks: [{ stream: 'stdout', data: Buffer.from(`out ${n}`) }], limit_bytes: 1 << 20, now }, context());
    const commit_id = id(2, n);
    await aggregates.handle(Commit, commit_id, {
      type: 'RecordCommitCreated', commit_id, org_id, owner_id: 'key-1', name: `c${n}`, description: null, parent_vm_id: vm_id,
      grandparent_commit_id: parent?.commit_id ?? null, includes_memory: false, config: VM_CONFIG_DEFAULTS, driver: 'memory', created_at: now,
    }, context());
    const tag = { org_id, tag_name: 'latest' };
    if (n === 0) await aggregates.handle(Tag, tag, { type: 'CreateTag', tag_id: id(4, 0), org_id, tag_name: 'latest', commit_id, description: null, now }, context());
    else await aggregates.handle(Tag, tag, { type: 'UpdateTag', commit_id, now }, context());
    if (n % 2 === 1) {
      await aggregates.handle(Vm, vm_id, { type: 'RequestVmDeletion' }, context());
      await aggregates.handle(Vm, vm_id, { type: 'RecordVmDeleted', now }, context());
    }
    parent = { commit_id, vm_id };
  }
}

/** Every document of every read model, and the checkpoint. */
export async function contents(store: ReadModelStore) {
  const collections = ALL_PROJECTIONS.flatMap((projection) => projection.collections).sort();
  const documents = await Promise.all(collections.map(async (collection) => [collection, await store.find(collection, {}, { sort: { _id: 1 } })]));
  return { documents: Object.fromEntries(documents), checkpoint: await store.getCheckpoint(PROJECTOR_CHECKPOINT) };
}
