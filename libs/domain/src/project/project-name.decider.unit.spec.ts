import { deciderSpec } from '../testing/decider-spec';
import { projectNameDecider } from './project-name.decider';
import type { ProjectNameEvent } from './project-name.events';

const now = '2026-11-24T10:00:00.000Z';
const spec = deciderSpec(projectNameDecider);
const reserve = (project_id: string, replaces: string | null = null) => ({ type: 'ReserveProjectName' as const, org_id: 'org-1', name: 'app', project_id, replaces, now });
const held: ProjectNameEvent = { type: 'ProjectNameReserved', data: { org_id: 'org-1', name: 'app', project_id: 'p-1', replaces: null, reserved_at: now } };

describe('project name decider: a name has one holder in an org', () => {
  it('the first deploy under a name holds it; another gets 409; a retry of the holder appends nothing', () => {
    spec.given([]).when(reserve('p-1')).then([held]);
    spec.given([held]).when(reserve('p-1')).then([]);
    spec.given([held]).when(reserve('p-2')).thenThrows('conflict', "project 'app' already exists");
  });

  it('a deploy that found the holder gone takes the name over; naming another holder is still a 409', () => {
    spec
      .given([held])
      .when(reserve('p-2', 'p-1'))
      .then([{ type: 'ProjectNameReserved', data: { org_id: 'org-1', name: 'app', project_id: 'p-2', replaces: 'p-1', reserved_at: now } }]);
    spec.given([held]).when(reserve('p-3', 'p-9')).thenThrows('conflict');
  });

  it('names follow the rule of names', () => spec.given([]).when({ ...reserve('p-1'), name: 'no/slash' }).thenThrows('invalid'));
});
