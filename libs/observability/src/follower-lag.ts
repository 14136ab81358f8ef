import type { EventStore } from '@arbor/event-store';

/** A process that follows `$all` from a checkpoint: the projector, a worker, the webhook deliverer. */
export interface LogFollower {
  /** The last position it has handled for good (null: none yet). */
  checkpoint(): number | null;
  /** The log it follows. */
  events: Pick<EventStore, 'headPosition' | 'readAll'>;
}

export interface FollowerLag {
  positions: number;
  seconds: number;
}

const followers = new Map<string, LogFollower>();

/**
 * Reports `follower`'s lag on /metrics under `name` from now on: one follower of a name per
 * process, the latest to start. A stopped follower is still reported (its lag grows, which is
 * the truth about it) until it starts again or another takes its name.
 */
export function reportFollowerLag(name: string, follower: LogFollower): void {
  followers.set(name, follower);
}

/**
 * How far behind the head of the log each follower is, measured now: positions (head minus
 * checkpoint) and seconds (how long ago the oldest event it has not handled was appended; 0 when
 * caught up). Two reads of the log a follower: its head and the one event after the checkpoint.
 * A follower whose log cannot be read is left out.
 */
export async function followerLags(): Promise<Map<string, FollowerLag>> {
  const lags = new Map<string, FollowerLag>();
  await Promise.all(
    [...followers].map(async ([name, follower]) => {
      try {
        lags.set(name, await lagOf(follower));
      } catch {
        // A closed or unreachable store: no figure rather than a wrong one.
      }
    }),
  );
  return lags;
}

async function lagOf(follower: LogFollower): Promise<FollowerLag> {
  const checkpoint = follower.checkpoint() ?? -1;
  const head = await follower.events.headPosition();
  if (head <= checkpoint) return { positions: 0, seconds: 0 };
  const [oldest] = await follower.events.readAll({ after_position: checkpoint, max_count: 1 });
  const seconds = oldest ? Math.max(0, (Date.now() - Date.parse(oldest.created_at)) / 1000) : 0;
  return { positions: head - checkpoint, seconds };
}
