import type { Decider } from '../shared/decider';
import { conflict, notFound } from '../shared/domain-error';
import type { CommitCommand } from './commit.commands';
import type { VmConfig } from '../vm/vm-config';
import type { CommitEvent } from './commit.events';

export interface CommitState {
  status: 'none' | 'created' | 'deleted';
  commit_id: string | null;
  org_id: string | null;
  /** The machine shape VMs started from it get, and the VM it was taken from. */
  config: VmConfig | null;
  parent_vm_id: string | null;
  is_public: boolean;
  name: string;
  description: string | null;
  /** VMs started from the commit: true while the VM exists, false once it was released. */
  uses: Record<string, boolean>;
  /** Tags pointing at the commit, by tag id. */
  tags: Record<string, TagHold>;
}

export interface TagHold {
  tag: string;
  tag_stream: string;
  tagged_at: string;
}

const initialState = (): CommitState => ({
  status: 'none',
  commit_id: null,
  org_id: null,
  config: null,
  parent_vm_id: null,
  is_public: false,
  name: '',
  description: null,
  uses: {},
  tags: {},
});

/** Blank names and descriptions are ignored, as the contract's server does. */
const given = (value: string | null | undefined): value is string => typeof value === 'string' && value.trim() !== '';

/** A live commit the org may read: its own, or a public one. */
const readable = (state: CommitState, org_id: string): boolean => state.status === 'created' && (state.org_id === org_id || state.is_public);

/** VMs that exist and were started from the commit (dead ones included: they exist until deleted). */
const activeVmCount = (state: CommitState): number => Object.values(state.uses).filter(Boolean).length;

/**
 * The commit stream is where restores and the deletion meet: a use is appended with the exact
 * revision read, so a restore and a deletion of one commit cannot both win. Once deleted, no VM
 * can start from the commit; while any VM started from it exists, it cannot be deleted.
 */
function decide(command: CommitCommand, state: CommitState): CommitEvent[] {
  switch (command.type) {
    case 'RecordCommitCreated': {
      // The worker may report the same snapshot twice after a crash: the first report stands.
      const { type: _, ...data } = command;
      return state.status === 'none' ? [{ type: 'CommitCreated', data }] : [];
    }
    case 'UpdateCommit': {
      if (state.status !== 'created') throw notFound('commit');
      const name = given(command.name) ? command.name.trim() : state.name;
      const description = given(command.description) ? command.description : state.description;
      if (command.is_public === state.is_public && name === state.name && description === state.description) return [];
      return [{ type: 'CommitUpdated', data: { commit_id: state.commit_id!, is_public: command.is_public, name, description } }];
    }
    case 'DeleteCommit': {
      if (state.status !== 'created') throw notFound('commit');
      const active = activeVmCount(state);
      if (active > 0) throw conflict(`commit still has ${active} active VM(s)`);
      const tags = Object.values(state.tags).map((hold) => hold.tag);
      if (tags.length > 0) throw conflict(`commit is still tagged: ${tags.sort().join(', ')}`);
      return [{ type: 'CommitDeleted', data: { commit_id: state.commit_id!, deleted_at: command.now } }];
    }
    case 'UseCommit':
      // Both the API and the worker claim a VM's use: once claimed it stands, even should the
      // commit have turned private since; a released VM never holds the commit again.
      if (command.vm_id in state.uses) return [];
      if (!readable(state, command.org_id) && !(state.status === 'created' && command.through_public_repository)) throw notFound('commit');
      return [{ type: 'CommitUsedByVm', data: { commit_id: state.commit_id!, vm_id: command.vm_id, used_at: command.now } }];
    case 'ReleaseCommit':
      if (state.uses[command.vm_id] !== true) return [];
      return [{ type: 'CommitReleasedByVm', data: { commit_id: state.commit_id!, vm_id: command.vm_id, released_at: command.now } }];
    case 'HoldCommitForTag': {
      const { tag_id, tag, tag_stream, now } = command;
      if (tag_id in state.tags) return [];
      // A tag may name only a live commit its org may read: its own, or a public one.
      if (!readable(state, command.org_id)) throw notFound('commit');
      return [{ type: 'CommitTagged', data: { commit_id: state.commit_id!, tag_id, tag, tag_stream, tagged_at: now } }];
    }
    case 'ReleaseCommitFromTag':
      if (!(command.tag_id in state.tags)) return [];
      return [{ type: 'CommitUntagged', data: { commit_id: state.commit_id!, tag_id: command.tag_id, untagged_at: command.now } }];
  }
}

function evolve(state: CommitState, event: CommitEvent): CommitState {
  switch (event.type) {
    case 'CommitCreated': {
      const { commit_id, org_id, config, parent_vm_id, name, description } = event.data;
      return { ...state, status: 'created', commit_id, org_id, config, parent_vm_id, is_public: false, name, description };
    }
    case 'CommitUpdated':
      return { ...state, is_public: event.data.is_public, name: event.data.name, description: event.data.description };
    case 'CommitDeleted':
      return { ...state, status: 'deleted' };
    case 'CommitUsedByVm':
      return { ...state, uses: { ...state.uses, [event.data.vm_id]: true } };
    case 'CommitReleasedByVm':
      return { ...state, uses: { ...state.uses, [event.data.vm_id]: false } };
    case 'CommitTagged': {
      const { tag_id, tag, tag_stream, tagged_at } = event.data;
      return { ...state, tags: { ...state.tags, [tag_id]: { tag, tag_stream, tagged_at } } };
    }
    case 'CommitUntagged': {
      const { [event.data.tag_id]: _, ...tags } = state.tags;
      return { ...state, tags };
    }
  }
}

export const commitDecider: Decider<CommitCommand, CommitState, CommitEvent> = { initialState, decide, evolve };
