import type { Decider } from '../shared/decider';
import { conflict } from '../shared/domain-error';
import type { ForkCommand } from './fork.commands';
import type { ForkEvent, ForkFailureKind, ForkRequested } from './fork.events';

/**
 * Where a fork is: each step's event moves it on, in this order; `aborting` removes what it made
 * (whatever of its VM, commit and repository exists), then `failed`.
 */
export type ForkStage = 'none' | 'requested' | 'vm_started' | 'committed' | 'repository_ready' | 'forked' | 'aborting' | 'failed';

export interface ForkState {
  stage: ForkStage;
  request: ForkRequested['data'] | null;
  /** The fork made the target repository (a clean-up removes it, if no other tag has come). */
  repository_created: boolean;
  failure: { kind: ForkFailureKind; reason: string } | null;
}

const initialState = (): ForkState => ({ stage: 'none', request: null, repository_created: false, failure: null });

/** The step each stage's next event records: a report for another stage appends nothing (a replay). */
const NEXT: Partial<Record<ForkCommand['type'], ForkStage>> = {
  RecordForkVmStarted: 'requested',
  RecordForkCommitted: 'vm_started',
  RecordForkRepositoryReady: 'committed',
  RecordRepoForked: 'repository_ready',
};

function decide(command: ForkCommand, state: ForkState): ForkEvent[] {
  if (command.type === 'RequestFork') {
    if (state.stage !== 'none') throw conflict(`fork ${command.fork_id} already exists`);
    const { type: _, now, ...request } = command;
    return [{ type: 'ForkRequested', data: { ...request, requested_at: now } }];
  }
  const request = state.request;
  if (!request) return [];
  const fork_id = request.fork_id;
  switch (command.type) {
    case 'AbortFork':
      if (['forked', 'aborting', 'failed'].includes(state.stage)) return [];
      return [{ type: 'ForkAborted', data: { fork_id, kind: command.kind, reason: command.reason } }];
    case 'RecordForkFailed':
      if (state.stage !== 'aborting') return [];
      return [{ type: 'ForkFailed', data: { fork_id, ...state.failure!, failed_at: command.now } }];
  }
  if (NEXT[command.type] !== state.stage) return [];
  switch (command.type) {
    case 'RecordForkVmStarted':
      return [{ type: 'ForkVmStarted', data: { fork_id, vm_id: request.vm_id } }];
    case 'RecordForkCommitted':
      return [{ type: 'ForkCommitted', data: { fork_id, commit_id: request.commit_id } }];
    case 'RecordForkRepositoryReady':
      return [{ type: 'ForkRepositoryReady', data: { fork_id, repo_id: request.repo_id, created: command.created } }];
    case 'RecordRepoForked': {
      const { org_id, repo_name, tag_name, tag_id, commit_id, vm_id } = request;
      const reference = `${repo_name}:${tag_name}`;
      return [{ type: 'RepoForked', data: { fork_id, org_id, repo_name, tag_name, tag_id, commit_id, vm_id, reference, forked_at: command.now } }];
    }
  }
}

function evolve(state: ForkState, event: ForkEvent): ForkState {
  switch (event.type) {
    case 'ForkRequested':
      return { ...state, stage: 'requested', request: event.data };
    case 'ForkVmStarted':
      return { ...state, stage: 'vm_started' };
    case 'ForkCommitted':
      return { ...state, stage: 'committed' };
    case 'ForkRepositoryReady':
      return { ...state, stage: 'repository_ready', repository_created: event.data.created };
    case 'RepoForked':
      return { ...state, stage: 'forked' };
    case 'ForkAborted':
      return { ...state, stage: 'aborting', failure: { kind: event.data.kind, reason: event.data.reason } };
    case 'ForkFailed':
      return { ...state, stage: 'failed' };
  }
}

export const forkDecider: Decider<ForkCommand, ForkState, ForkEvent> = { initialState, decide, evolve };
