import type { Decider } from '../shared/decider';
import { conflict } from '../shared/domain-error';
import { requireName } from '../shared/names';
import type { ProjectNameCommand } from './project-name.commands';
import type { ProjectNameEvent } from './project-name.events';

export interface ProjectNameState {
  /** The project holding the name, and since when (null: free). */
  project_id: string | null;
  reserved_at: string | null;
}

export const projectNameDecider: Decider<ProjectNameCommand, ProjectNameState, ProjectNameEvent> = {
  initialState: () => ({ project_id: null, reserved_at: null }),
  decide: (command, state) => {
    requireName('name', command.name);
    if (state.project_id === command.project_id) return [];
    if (state.project_id !== null && state.project_id !== command.replaces) throw conflict(`project '${command.name}' already exists`);
    const { org_id, name, project_id, replaces } = command;
    return [{ type: 'ProjectNameReserved', data: { org_id, name, project_id, replaces: state.project_id === null ? null : replaces, reserved_at: command.now } }];
  },
  evolve: (_state, event) => ({ project_id: event.data.project_id, reserved_at: event.data.reserved_at }),
};
