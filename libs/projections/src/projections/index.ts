import { apiKeysProjection } from './api-keys.projection';
import { commitNamesProjection } from './commit-names.projection';
import { commitTagsProjection } from './commit-tags.projection';
import { commitsProjection } from './commits.projection';
import { domainsProjection } from './domains.projection';
import { eventStatsProjection } from './event-stats.projection';
import { execLogsProjection } from './exec-logs.projection';
import { imagesProjection } from './images.projection';
import { orgMembersProjection } from './org-members.projection';
import { orgsProjection } from './orgs.projection';
import type { Projection } from './projection';
import { projectsProjection } from './projects.projection';
import { repositoriesProjection } from './repositories.projection';
import { sshKeysProjection } from './ssh-keys.projection';
import { usersProjection } from './users.projection';
import { vmsProjection } from './vms.projection';
import { webhooksProjection } from './webhooks.projection';

/** Every read model the projector maintains. */
export const ALL_PROJECTIONS: Projection[] = [
  vmsProjection,
  commitsProjection,
  commitNamesProjection,
  commitTagsProjection,
  orgsProjection,
  orgMembersProjection,
  usersProjection,
  sshKeysProjection,
  apiKeysProjection,
  repositoriesProjection,
  execLogsProjection,
  eventStatsProjection,
  webhooksProjection,
  domainsProjection,
  projectsProjection,
  imagesProjection,
];
export type { Projection };
