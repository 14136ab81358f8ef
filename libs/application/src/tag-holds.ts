import { aggregateOfStream, Commit, DomainError, Repository, Tag } from '@arbor/domain';
import type { AggregateRepository } from './aggregate-repository';
import { stepContext, type CommandContext } from './command-context';

/** A tag as it holds a commit: its id, how people name it, and the stream it lives on. */
export interface TagRef {
  tag_id: string;
  /** e.g. "tag stable" or "repo app:v1": what a refused deletion names. */
  label: string;
  stream: string;
  org_id: string;
}

/**
 * A hold whose tag does not point at its commit (its tag was never made, or moved or deleted
 * without letting go, because a process died between the two steps) is released only when older
 * than this: younger, its tag may still be on its way.
 */
const STALE_HOLD_MS = 10 * 60_000;

/**
 * Tags and the commits they point at: a tag holds its commit on the commit's stream
 * (CommitTagged) before it points there, and lets go (CommitUntagged) once it points elsewhere,
 * so a commit deletion and a tag never both win (the commit decider refuses to delete a held
 * commit; a hold of a deleted commit is refused). Used for commit tags and repository tags alike.
 */
export class TagHolds {
  constructor(private readonly aggregates: AggregateRepository) {}

  /**
   * Holds `commit_id` for the tag, then runs `point` (the tag's own command, creating or moving it);
   * lets go if that fails. After a move, the caller releases the commit the move event names as
   * the previous one. `check` first decides the tag's command without appending it, so one sure
   * to be refused (the name taken, the tag gone) is refused before a hold is logged and let go.
   */
  async pointAt<T>(commit_id: string, tag: TagRef, context: CommandContext, point: () => Promise<T>, check: () => Promise<void>): Promise<T> {
    await check();
    await this.hold(commit_id, tag, context);
    try {
      return await point();
    } catch (error) {
      await this.release(commit_id, tag.tag_id, stepContext(context, 'release-on-failure', commit_id));
      throw error;
    }
  }

  async release(commit_id: string, tag_id: string, context: CommandContext): Promise<void> {
    await this.aggregates.handle(Commit, commit_id, { type: 'ReleaseCommitFromTag', tag_id, now: new Date().toISOString() }, context);
  }

  /**
   * Before a commit is deleted: lets go of holds left by a process that died between a tag's two
   * steps (see STALE_HOLD_MS). A hold whose tag really points at the commit stays, and refuses
   * the deletion.
   */
  async releaseStale(commit_id: string, context: CommandContext): Promise<void> {
    const { state } = await this.aggregates.load(Commit, commit_id);
    for (const [tag_id, hold] of Object.entries(state.tags)) {
      if (Date.now() - Date.parse(hold.tagged_at) < STALE_HOLD_MS) continue;
      if (await this.tagPointsAt(hold.tag_stream, tag_id, commit_id)) continue;
      await this.release(commit_id, tag_id, stepContext(context, 'release-stale', tag_id));
    }
  }

  private async hold(commit_id: string, tag: TagRef, context: CommandContext): Promise<void> {
    const command = { type: 'HoldCommitForTag' as const, tag_id: tag.tag_id, tag: tag.label, tag_stream: tag.stream, org_id: tag.org_id, now: new Date().toISOString() };
    await this.aggregates.handle(Commit, commit_id, command, stepContext(context, 'hold', commit_id));
  }

  /** Whether the tag, as its own stream tells, points at the commit. */
  private async tagPointsAt(stream: string, tag_id: string, commit_id: string): Promise<boolean> {
    const aggregate = aggregateOfStream(stream);
    if (aggregate === Tag) {
      const { state } = await this.aggregates.loadStream(Tag, stream);
      return state.exists && state.tag_id === tag_id && state.commit_id === commit_id;
    }
    if (aggregate === Repository) {
      const { state } = await this.aggregates.loadStream(Repository, stream);
      return Object.values(state.tags).some((tag) => tag.tag_id === tag_id && tag.commit_id === commit_id);
    }
    throw new DomainError('failed', `${stream} holds no tags`);
  }
}
