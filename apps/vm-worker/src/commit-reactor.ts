import { causedBy, type AggregateRepository, type OrgQuotas } from '@arbor/application';
import { Commit } from '@arbor/domain';
import type { HypervisorDriver } from '@arbor/hypervisor';
import type { Log } from '@arbor/observability';
import type { StreamReactor } from './stream-reactor';

/**
 * Frees the host's snapshot of a deleted commit, and gives its bytes back to its org's quota (at
 * the deletion: a layer that later snapshots still sit on stays on disk until they go too). The API refuses to delete a commit that live
 * VMs still use; should the driver still refuse (a machine of another org started from a public
 * commit), the commit stays known and the next resync tries again.
 */
export class CommitReactor implements StreamReactor {
  readonly aggregate = Commit;
  readonly machineWork = true;

  constructor(
    private readonly aggregates: AggregateRepository,
    private readonly driver: HypervisorDriver,
    private readonly log: Log,
    private readonly quotas: OrgQuotas,
  ) {}

  async react(commit_id: string): Promise<boolean> {
    const { state, recorded } = await this.aggregates.load(Commit, commit_id);
    if (state.status !== 'deleted') return false;
    const deletion = recorded.find((event) => event.type === 'CommitDeleted')!;
    await this.quotas.releaseCommit(state.org_id!, commit_id, causedBy(deletion, 'ReleaseCommitStorage'));
    if (!(await this.driver.getSnapshot(commit_id))) return false;
    try {
      await this.driver.deleteSnapshot(commit_id);
      this.log.info(`worker: deleted the snapshot of commit ${commit_id}`);
      return false;
    } catch (error) {
      this.log.warn(`worker: snapshot of deleted commit ${commit_id} kept for now: ${(error as Error).message}`);
      return true;
    }
  }
}
