import type { AllSubscription, EventStore, RecordedEvent } from '@arbor/event-store';
import type { OpenConnections } from './open-connections';
import type { RouteTable } from './route-table';
import type { Log } from '@arbor/observability';

/** VM events after which no connection to the VM may stay open. */
const VM_GONE = new Set(['VmDeletionRequested', 'VmDeleted', 'VmDied', 'VmBootFailed']);

/**
 * Follows the log from its head (an edge keeps no state: what happened before it started is in
 * the read models it routes by), passes every event to the route table (a VM's or a domain's
 * forgets its remembered route) and ends the open connections that a change makes wrong: a VM
 * being deleted or found dead, a custom domain removed.
 */
export class RouteChanges {
  private subscription: AllSubscription | null = null;
  private following: Promise<void> | null = null;
  private position = -1;
  private stopped = false;

  constructor(
    private readonly events: EventStore,
    private readonly connections: OpenConnections,
    private readonly routes: RouteTable,
    private readonly log: Log,
  ) {}

  async start(): Promise<void> {
    this.position = await this.events.headPosition();
    this.routes.followFrom(this.position);
    this.following = this.follow();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.subscription?.unsubscribe();
    await this.following;
  }

  /** Follows until stopped; a broken subscription (the store went away) is taken up again where it was. */
  private async follow(): Promise<void> {
    while (!this.stopped) {
      try {
        this.subscription = this.events.subscribeToAll({ after_position: this.position });
        for await (const event of this.subscription) {
          this.position = event.position;
          this.apply(event);
        }
      } catch (error) {
        this.log.warn(`edge: following the log failed, again in a second: ${(error as Error).message}`);
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    }
  }

  private apply(event: RecordedEvent): void {
    const { type, data } = event;
    this.routes.changed(event);
    if (VM_GONE.has(type)) {
      const vm_id = (data as { vm_id: string }).vm_id;
      const closed = this.connections.closeVm(vm_id);
      if (closed) this.log.info(`edge: ${type} for ${vm_id}: closed ${closed} connection(s)`);
    } else if (type === 'DomainRemoved') {
      const domain = (data as { domain: string }).domain;
      const closed = this.connections.closeDomain(domain);
      if (closed) this.log.info(`edge: domain ${domain} removed: closed ${closed} connection(s)`);
    }
  }
}
