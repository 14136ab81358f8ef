import type { Decider } from '../shared/decider';
import { conflict, notFound } from '../shared/domain-error';
import { requireName } from '../shared/names';
import type { TagCommand } from './tag.commands';
import type { TagEvent } from './tag.events';

export interface TagState {
  exists: boolean;
  tag_id: string | null;
  commit_id: string | null;
  description: string | null;
}

const initialState = (): TagState => ({ exists: false, tag_id: null, commit_id: null, description: null });

function decide(command: TagCommand, state: TagState): TagEvent[] {
  switch (command.type) {
    case 'CreateTag': {
      requireName('tag_name', command.tag_name);
      if (state.exists) throw conflict(`tag '${command.tag_name}' already exists`);
      const { tag_id, org_id, tag_name, commit_id, description, now } = command;
      return [{ type: 'TagCreated', data: { tag_id, org_id, tag_name, commit_id, description, created_at: now } }];
    }
    case 'UpdateTag': {
      if (!state.exists) throw notFound('tag');
      const events: TagEvent[] = [];
      if (command.commit_id && command.commit_id !== state.commit_id) {
        events.push({ type: 'TagMoved', data: { tag_id: state.tag_id!, commit_id: command.commit_id, previous_commit_id: state.commit_id!, moved_at: command.now } });
      }
      if (command.description !== undefined && command.description !== state.description) {
        events.push({ type: 'TagDescriptionChanged', data: { tag_id: state.tag_id!, description: command.description, changed_at: command.now } });
      }
      return events;
    }
    case 'DeleteTag':
      if (!state.exists) throw notFound('tag');
      return [{ type: 'TagDeleted', data: { tag_id: state.tag_id!, deleted_at: command.now } }];
  }
}

function evolve(state: TagState, event: TagEvent): TagState {
  switch (event.type) {
    case 'TagCreated':
      return { exists: true, tag_id: event.data.tag_id, commit_id: event.data.commit_id, description: event.data.description };
    case 'TagMoved':
      return { ...state, commit_id: event.data.commit_id };
    case 'TagDescriptionChanged':
      return { ...state, description: event.data.description };
    case 'TagDeleted':
      return initialState();
  }
}

export const tagDecider: Decider<TagCommand, TagState, TagEvent> = { initialState, decide, evolve };
