import { commitTagsProjection } from './commit-tags.projection';
import { commitsProjection } from './commits.projection';
import { eventStatsProjection } from './event-stats.projection';
import { execLogsProjection } from './exec-logs.projection';
import { orgsProjection } from './orgs.projection';
import type { Projection } from './projection';
import { repositoriesProjection } from './repositories.projection';
import { vmsProjection } from './vms.projection';
import { webhooksProjection } from './webhooks.projection';

/** Every read model the projector maintains. */
export const ALL_PROJECTIONS: Projection[] = [
  vmsProjection,
  commitsProjection,
  commitTagsProjection,
  orgsProjection,
  repositoriesProjection,
  execLogsProjection,
  eventStatsProjection,
  webhooksProjection,
];
export type { Projection };
