import { Commit, OrgUsage, QuotaExceededError, Vm, type OrgUsageCommand, type ResourceLimits, type VmShare } from '@arbor/domain';
import type { AggregateRepository } from './aggregate-repository';
import { stepContext, type CommandContext } from './command-context';

/**
 * A reservation this old whose VM or commit never came to be (the process that reserved died
 * before asking for it), or is gone without its release, is let go by the next reservation that
 * would otherwise be refused.
 */
export const STALE_RESERVATION_MS = 10 * 60_000;

/**
 * The org's quotas (the `usage-<org>` stream and its decider): the api reserves before it asks for
 * a VM or a commit, the worker releases once the machine is gone and records what a commit took.
 * A refusal is a QuotaExceededError (403) naming the limit, its value and the use.
 */
export class OrgQuotas {
  constructor(
    private readonly aggregates: AggregateRepository,
    readonly limits: ResourceLimits,
  ) {}

  /**
   * Reserves the shares of new VMs, all or none (a branch's children at once), or a VM's new share
   * (a resize). `existing` lists the org's VMs; it is read only when the org's usage is opened.
   */
  async reserveVms(org_id: string, vms: VmShare[], existing: () => Promise<VmShare[]>, context: CommandContext): Promise<void> {
    const { state } = await this.aggregates.load(OrgUsage, org_id);
    const seed = state.opened ? [] : await existing();
    await this.reserving(org_id, context, () => ({ type: 'ReserveVmResources', org_id, vms, limits: this.limits, existing: seed, now: new Date().toISOString() }));
  }

  releaseVm(org_id: string, vm_id: string, context: CommandContext): Promise<unknown> {
    return this.aggregates.handle(OrgUsage, org_id, { type: 'ReleaseVmResources', org_id, vm_id, now: new Date().toISOString() }, context);
  }

  /** Reserves the most a commit can take (its VM's disk and memory) until it is measured. */
  async reserveCommit(org_id: string, commit_id: string, bytes: number, context: CommandContext): Promise<void> {
    await this.reserving(org_id, context, this.commitReservation(org_id, commit_id, bytes));
  }

  /** Throws what reserveCommit would (403), appending nothing (stale reservations aside). */
  async checkCommit(org_id: string, commit_id: string, bytes: number, context: CommandContext): Promise<void> {
    const command = this.commitReservation(org_id, commit_id, bytes);
    await this.retryingStale(org_id, context, () => this.aggregates.check(OrgUsage, org_id, command(), context));
  }

  private commitReservation(org_id: string, commit_id: string, bytes: number): () => OrgUsageCommand {
    return () => ({ type: 'ReserveCommitStorage', org_id, commit_id, bytes, limits: this.limits, now: new Date().toISOString() });
  }

  measureCommit(org_id: string, commit_id: string, bytes: number, context: CommandContext): Promise<unknown> {
    return this.aggregates.handle(OrgUsage, org_id, { type: 'MeasureCommitStorage', org_id, commit_id, bytes, now: new Date().toISOString() }, context);
  }

  releaseCommit(org_id: string, commit_id: string, context: CommandContext): Promise<unknown> {
    return this.aggregates.handle(OrgUsage, org_id, { type: 'ReleaseCommitStorage', org_id, commit_id, now: new Date().toISOString() }, context);
  }

  /** Runs a reservation (see retryingStale). */
  private reserving(org_id: string, context: CommandContext, command: () => OrgUsageCommand): Promise<void> {
    return this.retryingStale(org_id, context, async () => {
      await this.aggregates.handle(OrgUsage, org_id, command(), context);
    });
  }

  /** Runs `attempt`; refused by an org quota, it lets stale reservations go and tries once more. */
  private async retryingStale(org_id: string, context: CommandContext, attempt: () => Promise<void>): Promise<void> {
    try {
      await attempt();
    } catch (error) {
      if (!(error instanceof QuotaExceededError) || !(await this.releaseStale(org_id, context))) throw error;
      await attempt();
    }
  }

  /** Releases reservations whose VM or commit does not exist (any more); returns how many. */
  private async releaseStale(org_id: string, context: CommandContext): Promise<number> {
    const { state } = await this.aggregates.load(OrgUsage, org_id);
    const before = new Date(Date.now() - STALE_RESERVATION_MS).toISOString();
    let released = 0;
    for (const [vm_id, share] of Object.entries(state.vms)) {
      if (share.since > before) continue;
      const { lifecycle } = (await this.aggregates.load(Vm, vm_id)).state;
      if (lifecycle !== 'none' && lifecycle !== 'deleted') continue;
      await this.releaseVm(org_id, vm_id, stepContext(context, 'release-stale-vm', vm_id));
      released++;
    }
    for (const [commit_id, commit] of Object.entries(state.commits)) {
      if (commit.since > before) continue;
      const { status } = (await this.aggregates.load(Commit, commit_id)).state;
      if (status === 'created') continue;
      await this.releaseCommit(org_id, commit_id, stepContext(context, 'release-stale-commit', commit_id));
      released++;
    }
    return released;
  }
}
