import type { NetworkLease } from './network-leases';

/** A machine's attach as a batch carries it out: its lease once made, or why it could not be. */
export interface AttachRequest {
  vmId: string;
  group: string;
  port: NetworkLease['port'];
  lease?: NetworkLease;
  error?: Error;
}

/** A lease of no group (a warm machine's) taken over by a VM: under its id, in its group. */
export interface AdoptRequest {
  from: string;
  vmId: string;
  group: string;
  lease?: NetworkLease;
  error?: Error;
}

/** What one batch carries out (see HostNetwork.carryOut). */
export interface NetworkWork {
  attaches: AttachRequest[];
  adoptions: AdoptRequest[];
  detaches: string[];
}

interface Waiting<T> {
  resolve: (value: T) => void;
  reject: (error: unknown) => void;
}

/**
 * Attaches and detaches asked in one turn of the event loop, carried out together (by
 * HostNetwork, under one hold of the host lock), one batch at a time; what is asked while a batch
 * runs goes in the next. A hundred machines made or destroyed at once then cost a few host
 * commands, not a few each.
 */
export class NetworkBatch {
  private attaches: (AttachRequest & Waiting<NetworkLease>)[] = [];
  private adoptions: (AdoptRequest & Waiting<NetworkLease>)[] = [];
  private detaches: (Waiting<void> & { vmId: string })[] = [];
  private running: Promise<void> | null = null;
  private scheduled = false;

  constructor(private readonly carryOut: (work: NetworkWork) => Promise<void>) {}

  attach(vmId: string, group: string, port: NetworkLease['port']): Promise<NetworkLease> {
    return new Promise((resolve, reject) => {
      this.attaches.push({ vmId, group, port, resolve, reject });
      this.schedule();
    });
  }

  adopt(from: string, vmId: string, group: string): Promise<NetworkLease> {
    return new Promise((resolve, reject) => {
      this.adoptions.push({ from, vmId, group, resolve, reject });
      this.schedule();
    });
  }

  detach(vmId: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.detaches.push({ vmId, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    // Whatever else this turn asks joins; a batch still running goes first.
    setImmediate(() => void (this.running ?? Promise.resolve()).then(() => this.run()));
  }

  private async run(): Promise<void> {
    this.scheduled = false;
    const attaches = this.attaches.splice(0);
    const adoptions = this.adoptions.splice(0);
    const detaches = this.detaches.splice(0);
    if (attaches.length + adoptions.length + detaches.length === 0) return;
    const done = this.carryOut({ attaches, adoptions, detaches: [...new Set(detaches.map((request) => request.vmId))] });
    this.running = done.catch(() => undefined).finally(() => (this.running = null));
    try {
      await done;
    } catch (error) {
      [...attaches, ...adoptions, ...detaches].forEach((request) => request.reject(error));
      return;
    }
    for (const request of [...attaches, ...adoptions]) {
      if (request.lease && !request.error) request.resolve(request.lease);
      else request.reject(request.error ?? new Error(`the network of ${request.vmId} was not made`));
    }
    detaches.forEach((request) => request.resolve());
  }
}
