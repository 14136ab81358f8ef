import { stepContext, type CommandContext, type TagHolds } from '@arbor/application';
import type { RepositoryEvent } from '@arbor/domain';

/** The tags a repository command moved or deleted let go of the commits they no longer point at. */
export async function releaseCommitsLeft(holds: TagHolds, events: RepositoryEvent[], context: CommandContext): Promise<void> {
  for (const event of events) {
    if (event.type === 'RepoTagMoved') await holds.release(event.data.previous_commit_id, event.data.tag_id, stepContext(context, 'release', event.data.tag_id));
    if (event.type === 'RepoTagDeleted') await holds.release(event.data.commit_id, event.data.tag_id, stepContext(context, 'release', event.data.tag_id));
  }
}
