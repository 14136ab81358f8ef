import { Inject, Injectable, type OnModuleDestroy, Optional } from '@nestjs/common';
import { EVENT_STORE, type EventStore } from '@arbor/event-store';
import {
  COMMIT_ANCESTORS_COLLECTION,
  COMMIT_TAGS_COLLECTION,
  COMMITS_COLLECTION,
  ORGS_COLLECTION,
  REPO_TAGS_COLLECTION,
  REPOSITORIES_COLLECTION,
  SqliteReadModelStore,
  VMS_COLLECTION,
  type ReadModelStore,
} from '@arbor/read-models';
import { ALL_PROJECTIONS, replayLog } from '@arbor/projections';
import { HttpError } from '../http/http-error';
import type { AsOf } from './as-of';

/**
 * The read models `as_of` serves (VMs, commits and their ancestors, commit tags, repositories and
 * their tags), and what their projections read while projecting besides their own collections:
 * `orgs` (a repository's document carries its org's name).
 */
const SERVED = new Set([VMS_COLLECTION, COMMITS_COLLECTION, COMMIT_ANCESTORS_COLLECTION, COMMIT_TAGS_COLLECTION, REPOSITORIES_COLLECTION, REPO_TAGS_COLLECTION]);
const READ_WHILE_PROJECTING = new Set([ORGS_COLLECTION]);
/**
 * The projections a past store is replayed through: the projector's own, those that keep what
 * `as_of` serves or what those read. The others, exec output above all, need not be replayed.
 */
export const AS_OF_PROJECTIONS = ALL_PROJECTIONS.filter((projection) => projection.collections.some((collection) => SERVED.has(collection) || READ_WHILE_PROJECTING.has(collection)));

export interface AsOfLimits {
  /** Past stores kept after their requests (least recently used goes first). */
  cached: number;
  /** Stores replayed at once; more wait their turn. */
  concurrentBuilds: number;
  /** Positions being replayed or waiting to be at once; one more is refused (503). */
  pendingBuilds: number;
}

const DEFAULT_LIMITS: AsOfLimits = { cached: 4, concurrentBuilds: 1, pendingBuilds: 8 };
/** Nest token for other limits than the defaults (tests). */
export const AS_OF_LIMITS = Symbol('AS_OF_LIMITS');

/** The reads of one read model over a given store (`VmReadModel`, `CommitReadModel`, `TagReadModel`, `RepositoryReadModel`). */
export interface ReadsOver<R> {
  over(store: ReadModelStore): R;
}

/** A past store: the read models with every event up to `position` applied. */
interface PastStore {
  position: number;
  store: ReadModelStore;
  /** Requests reading it now: while any are, it is neither continued from nor closed. */
  readers: number;
  /** Dropped from the cache: closed once its last reader is done. */
  retired: boolean;
}

interface Waiting {
  /** Requests waiting for the build: each holds a read of the store once it is built. */
  waiters: number;
}

interface PendingBuild extends Waiting {
  built: Promise<PastStore>;
}

/**
 * The read models as of a log position, for `?as_of=`: the log replayed up to it through the
 * projector's own projections into a throwaway in-memory SQLite store, never the live one. The
 * endpoints read it with the very read-model classes (and so the org rules) they read the live
 * store with. A few past stores are kept; a later position continues from the nearest earlier
 * one nobody is reading (it moves forward: the store at the earlier position is gone), otherwise
 * the replay starts at the beginning. Builds run one at a time, concurrent requests for one
 * position share its build, and a bounded number of positions may wait (then 503).
 */
@Injectable()
export class ReadModelsAsOf implements OnModuleDestroy {
  /** Least recently used first. */
  private readonly cached: PastStore[] = [];
  private readonly pending = new Map<number, PendingBuild>();
  private freeBuilds: number;
  private readonly queued: (() => void)[] = [];

  constructor(
    @Inject(EVENT_STORE) private readonly events: EventStore,
    @Optional() @Inject(AS_OF_LIMITS) private readonly limits: AsOfLimits = DEFAULT_LIMITS,
  ) {
    this.freeBuilds = limits.concurrentBuilds;
  }

  /** `read` over `reads`: as they are now when `as_of` is absent, else over the store as of it. */
  async read<R extends ReadsOver<R>, T>(as_of: AsOf | undefined, reads: R, read: (reads: R) => Promise<T>): Promise<T> {
    if (as_of === undefined) return read(reads);
    const past = await this.lease(await this.positionOf(as_of));
    try {
      return await read(reads.over(past.store));
    } finally {
      past.readers--;
      if (past.retired && past.readers === 0) await past.store.close();
    }
  }

  /**
   * The log position `as_of` names: a position up to the head (past it: 400), or the last event
   * recorded at or before a time (-1 before the first one; a time in the future: 400).
   */
  async positionOf(as_of: AsOf): Promise<number> {
    const head = await this.events.headPosition();
    if ('position' in as_of) {
      if (as_of.position > head) throw new HttpError(400, `as_of ${as_of.position} is past the head of the log (position ${head})`);
      return as_of.position;
    }
    if (as_of.time > Date.now()) throw new HttpError(400, `as_of ${new Date(as_of.time).toISOString()} is in the future`);
    return lastPositionAtOrBefore(this.events, as_of.time, head);
  }

  async onModuleDestroy(): Promise<void> {
    for (const past of this.cached.splice(0)) await past.store.close();
  }

  /** The store as of `position`, held for one read (the caller lets go of it). */
  private lease(position: number): Promise<PastStore> {
    const cached = this.cached.findIndex((past) => past.position === position);
    if (cached >= 0) {
      const [past] = this.cached.splice(cached, 1);
      this.cached.push(past);
      past.readers++;
      return Promise.resolve(past);
    }
    let pending = this.pending.get(position);
    if (!pending) {
      if (this.pending.size >= this.limits.pendingBuilds) throw new HttpError(503, 'too many as_of positions are being replayed; try again shortly');
      const waiting: Waiting = { waiters: 0 };
      pending = Object.assign(waiting, { built: this.build(position, waiting) });
      this.pending.set(position, pending);
    }
    pending.waiters++;
    return pending.built;
  }

  private async build(position: number, waiting: Waiting): Promise<PastStore> {
    await this.acquireBuild();
    try {
      const base = this.takeBase(position);
      const store = base?.store ?? SqliteReadModelStore.open(':memory:');
      try {
        await replayLog(this.events, store, { after: base?.position ?? -1, until: position, projections: AS_OF_PROJECTIONS });
      } catch (error) {
        await store.close();
        throw error;
      }
      // Every request waiting for it holds it from here, so nothing continues from it or closes it under them.
      const past: PastStore = { position, store, readers: waiting.waiters, retired: false };
      this.cached.push(past);
      await this.evict();
      return past;
    } finally {
      this.pending.delete(position);
      this.releaseBuild();
    }
  }

  /** The nearest earlier store nobody reads, taken out of the cache to be continued; none: undefined. */
  private takeBase(position: number): PastStore | undefined {
    let best = -1;
    this.cached.forEach((past, i) => {
      if (past.readers === 0 && past.position < position && (best < 0 || past.position > this.cached[best].position)) best = i;
    });
    return best < 0 ? undefined : this.cached.splice(best, 1)[0];
  }

  private async evict(): Promise<void> {
    while (this.cached.length > this.limits.cached) {
      const past = this.cached.shift()!;
      past.retired = true;
      if (past.readers === 0) await past.store.close();
    }
  }

  private async acquireBuild(): Promise<void> {
    if (this.freeBuilds > 0) this.freeBuilds--;
    else await new Promise<void>((resolve) => this.queued.push(resolve));
  }

  private releaseBuild(): void {
    const next = this.queued.shift();
    if (next) next();
    else this.freeBuilds++;
  }
}

/**
 * The position of the last event recorded at or before `time` (-1: none), by a binary search
 * over positions that reads one event a step: a few dozen reads however long the log. Recorded
 * times are taken to grow with positions (one clock); where writers' clocks disagree by a little,
 * the answer is a position where the log passes `time`, as close as their disagreement allows.
 */
async function lastPositionAtOrBefore(events: EventStore, time: number, head: number): Promise<number> {
  // Invariant: the event at `known` (if any) was recorded at or before `time`; every event after `beyond` was not.
  let known = -1;
  let beyond = head;
  while (known < beyond) {
    const middle = Math.floor((known + beyond + 1) / 2);
    const [first] = await events.readAll({ after_position: middle - 1, max_count: 1 });
    if (first && first.position <= beyond && Date.parse(first.created_at) <= time) known = first.position;
    else beyond = middle - 1;
  }
  return known;
}
