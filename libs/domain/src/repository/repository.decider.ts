import type { Decider } from '../shared/decider';
import { conflict, invalid, notFound } from '../shared/domain-error';
import { requireName } from '../shared/names';
import type { RepositoryCommand } from './repository.commands';
import type { RepositoryEvent } from './repository.events';

export interface RepoTag {
  tag_id: string;
  commit_id: string;
  description: string | null;
  created_at: string;
  updated_at: string;
}

export interface RepositoryState {
  /** Null while the name is free (never used, or its repository was deleted). */
  repo_id: string | null;
  org_id: string | null;
  name: string | null;
  description: string | null;
  is_public: boolean;
  created_at: string | null;
  tags: Record<string, RepoTag>;
}

const initialState = (): RepositoryState => ({ repo_id: null, org_id: null, name: null, description: null, is_public: false, created_at: null, tags: {} });

function requireRepository(state: RepositoryState): string {
  if (state.repo_id === null) throw notFound('repository');
  return state.repo_id;
}

/**
 * The repository's tag of that name, if it has one. Names are the client's, so only the map's own
 * entries count: `__proto__` or `constructor` would otherwise find Object.prototype's.
 */
export function repositoryTag(state: Pick<RepositoryState, 'tags'>, tag_name: string): RepoTag | undefined {
  return Object.hasOwn(state.tags, tag_name) ? state.tags[tag_name] : undefined;
}

function requireTag(state: RepositoryState, tag_name: string): RepoTag {
  const tag = repositoryTag(state, tag_name);
  if (!tag) throw notFound('tag');
  return tag;
}

function decide(command: RepositoryCommand, state: RepositoryState): RepositoryEvent[] {
  switch (command.type) {
    case 'CreateRepository': {
      const { repo_id, org_id, name, description, now } = command;
      requireName('name', name);
      if (state.repo_id !== null) throw conflict(`repository '${name}' already exists`);
      return [{ type: 'RepositoryCreated', data: { repo_id, org_id, name, description, created_at: now } }];
    }
    case 'SetRepositoryVisibility': {
      const repo_id = requireRepository(state);
      if (command.is_public === state.is_public) return [];
      return [{ type: 'RepositoryVisibilityChanged', data: { repo_id, is_public: command.is_public, changed_at: command.now } }];
    }
    case 'DeleteRepository': {
      const repo_id = requireRepository(state);
      const deleted_at = command.now;
      return [
        ...Object.entries(state.tags).map(([tag_name, tag]): RepositoryEvent => ({
          type: 'RepoTagDeleted',
          data: { repo_id, tag_id: tag.tag_id, tag_name, commit_id: tag.commit_id, deleted_at },
        })),
        { type: 'RepositoryDeleted', data: { repo_id, deleted_at } },
      ];
    }
    case 'CreateRepoTag': {
      const repo_id = requireRepository(state);
      const { tag_id, tag_name, commit_id, description, now } = command;
      requireName('tag_name', tag_name);
      if (repositoryTag(state, tag_name)) throw conflict(`tag '${tag_name}' already exists in repository '${state.name}'`);
      return [{ type: 'RepoTagCreated', data: { repo_id, tag_id, tag_name, commit_id, description, created_at: now } }];
    }
    case 'UpdateRepoTag': {
      const repo_id = requireRepository(state);
      const { tag_name, commit_id, description, now } = command;
      if ((commit_id === undefined || commit_id === null) && description === undefined) throw invalid('no updates provided');
      const tag = requireTag(state, tag_name);
      const events: RepositoryEvent[] = [];
      if (commit_id && commit_id !== tag.commit_id) {
        events.push({ type: 'RepoTagMoved', data: { repo_id, tag_id: tag.tag_id, tag_name, commit_id, previous_commit_id: tag.commit_id, moved_at: now } });
      }
      if (description !== undefined && description !== tag.description) {
        events.push({ type: 'RepoTagDescribed', data: { repo_id, tag_id: tag.tag_id, tag_name, description, changed_at: now } });
      }
      return events;
    }
    case 'DeleteRepoTag': {
      const repo_id = requireRepository(state);
      const tag = requireTag(state, command.tag_name);
      return [{ type: 'RepoTagDeleted', data: { repo_id, tag_id: tag.tag_id, tag_name: command.tag_name, commit_id: tag.commit_id, deleted_at: command.now } }];
    }
  }
}

function evolve(state: RepositoryState, event: RepositoryEvent): RepositoryState {
  switch (event.type) {
    case 'RepositoryCreated': {
      const { repo_id, org_id, name, description, created_at } = event.data;
      return { ...initialState(), repo_id, org_id, name, description, created_at };
    }
    case 'RepositoryVisibilityChanged':
      return { ...state, is_public: event.data.is_public };
    case 'RepositoryDeleted':
      return initialState();
    case 'RepoTagCreated': {
      const { tag_id, tag_name, commit_id, description, created_at } = event.data;
      return { ...state, tags: { ...state.tags, [tag_name]: { tag_id, commit_id, description, created_at, updated_at: created_at } } };
    }
    case 'RepoTagMoved': {
      const tag = repositoryTag(state, event.data.tag_name)!;
      return { ...state, tags: { ...state.tags, [event.data.tag_name]: { ...tag, commit_id: event.data.commit_id, updated_at: event.data.moved_at } } };
    }
    case 'RepoTagDescribed': {
      const tag = repositoryTag(state, event.data.tag_name)!;
      return { ...state, tags: { ...state.tags, [event.data.tag_name]: { ...tag, description: event.data.description, updated_at: event.data.changed_at } } };
    }
    case 'RepoTagDeleted': {
      const { [event.data.tag_name]: _, ...tags } = state.tags;
      return { ...state, tags };
    }
  }
}

export const repositoryDecider: Decider<RepositoryCommand, RepositoryState, RepositoryEvent> = { initialState, decide, evolve };
