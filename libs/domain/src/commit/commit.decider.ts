import type { Decider } from '../shared/decider';
import { notFound } from '../shared/domain-error';
import type { CommitCreated, CommitEvent } from './commit.events';

export type CommitCommand =
  | { type: 'RecordCommitCreated'; data: CommitCreated['data'] }
  | { type: 'UpdateCommit'; is_public: boolean; name?: string | null; description?: string | null }
  | { type: 'DeleteCommit'; now: string };

export interface CommitState {
  status: 'none' | 'created' | 'deleted';
  commit_id: string | null;
  org_id: string | null;
  is_public: boolean;
  name: string;
  description: string | null;
}

const initialState = (): CommitState => ({ status: 'none', commit_id: null, org_id: null, is_public: false, name: '', description: null });

/** Blank names and descriptions are ignored, as the contract's server does. */
const given = (value: string | null | undefined): value is string => typeof value === 'string' && value.trim() !== '';

function decide(command: CommitCommand, state: CommitState): CommitEvent[] {
  switch (command.type) {
    case 'RecordCommitCreated':
      // The worker may report the same snapshot twice after a crash: the first report stands.
      return state.status === 'none' ? [{ type: 'CommitCreated', data: command.data }] : [];
    case 'UpdateCommit': {
      if (state.status !== 'created') throw notFound('commit');
      const name = given(command.name) ? command.name.trim() : state.name;
      const description = given(command.description) ? command.description : state.description;
      if (command.is_public === state.is_public && name === state.name && description === state.description) return [];
      return [{ type: 'CommitUpdated', data: { commit_id: state.commit_id!, is_public: command.is_public, name, description } }];
    }
    case 'DeleteCommit':
      if (state.status !== 'created') throw notFound('commit');
      return [{ type: 'CommitDeleted', data: { commit_id: state.commit_id!, deleted_at: command.now } }];
  }
}

function evolve(state: CommitState, event: CommitEvent): CommitState {
  switch (event.type) {
    case 'CommitCreated': {
      const { commit_id, org_id, name, description } = event.data;
      return { status: 'created', commit_id, org_id, is_public: false, name, description };
    }
    case 'CommitUpdated':
      return { ...state, is_public: event.data.is_public, name: event.data.name, description: event.data.description };
    case 'CommitDeleted':
      return { ...state, status: 'deleted' };
  }
}

export const commitDecider: Decider<CommitCommand, CommitState, CommitEvent> = { initialState, decide, evolve };

