import type { Decider } from '../shared/decider';
import { conflict, notFound } from '../shared/domain-error';
import type { ImageSizeRule, ImageSource, ImageStage } from './image-source';
import type { ImageCommand } from './image.commands';
import type { ImageEvent } from './image.events';

/**
 * Where an image is: `pending` until a worker claims its job, `creating` while one builds it,
 * then `completed` (it exists: VMs may boot it) or `failed`; `deleted` at the end.
 */
export type ImageStatus = 'none' | 'pending' | 'creating' | 'completed' | 'failed' | 'deleted';

export interface ImageState {
  status: ImageStatus;
  image_id: string | null;
  org_id: string | null;
  owner_id: string | null;
  image_name: string | null;
  source: ImageSource | null;
  size_mib: number;
  size_rule: ImageSizeRule;
  description: string | null;
  is_public: boolean;
  /** The job's finer stage while it runs (and where it failed). */
  stage: ImageStage;
  /** The worker that builds it, and then holds it; its attempt at the build (restarts count). */
  worker_id: string | null;
  attempt: number;
  /** The disk a VM of it gets, once built. */
  built_size_mib: number | null;
  error: string | null;
  /** VMs booted from it: true while the VM exists, false once released. */
  uses: Record<string, boolean>;
}

const initialState = (): ImageState => ({
  status: 'none',
  image_id: null,
  org_id: null,
  owner_id: null,
  image_name: null,
  source: null,
  size_mib: 0,
  size_rule: 'extra',
  description: null,
  is_public: false,
  stage: 'pending',
  worker_id: null,
  attempt: 0,
  built_size_mib: null,
  error: null,
  uses: {},
});

const activeVmCount = (state: ImageState): number => Object.values(state.uses).filter(Boolean).length;
const unfinished = (state: ImageState): boolean => state.status === 'pending' || state.status === 'creating';

/**
 * The image stream is where the job's worker, the VMs that boot it and its deletion meet: a
 * worker's claim, a VM's use and the deletion are each decided on the state they read (appended
 * at that exact revision), so two workers never both build it and no VM boots an image being deleted.
 */
function decide(command: ImageCommand, state: ImageState): ImageEvent[] {
  switch (command.type) {
    case 'RequestImageCreation': {
      if (state.status !== 'none') return []; // a retry of the same request
      const { type: _, now, ...request } = command;
      return [{ type: 'ImageCreationRequested', data: { ...request, requested_at: now } }];
    }
    case 'StartImageBuild': {
      const image_id = state.image_id!;
      const { worker_id, attempt, now } = command;
      const claim = state.status === 'pending' && attempt === 1;
      const resume = state.status === 'creating' && state.worker_id === worker_id && attempt === state.attempt + 1;
      return claim || resume ? [{ type: 'ImageBuildStarted', data: { image_id, worker_id, attempt, started_at: now } }] : [];
    }
    case 'RecordImageProgress':
      if (state.status !== 'creating') return [];
      return [{ type: 'ImageBuildProgressed', data: { image_id: state.image_id!, stage: command.stage, detail: command.detail, at: command.now } }];
    case 'RecordImageCreated':
      if (state.status !== 'creating' || state.worker_id !== command.worker_id) return [];
      return [{ type: 'ImageCreated', data: { image_id: state.image_id!, worker_id: command.worker_id, size_mib: command.size_mib, created_at: command.now } }];
    case 'FailImageCreation':
      if (!unfinished(state)) return [];
      return [{ type: 'ImageCreationFailed', data: { image_id: state.image_id!, stage: state.stage, reason: command.reason, failed_at: command.now } }];
    case 'SetImageVisibility':
      if (state.status !== 'completed') throw notFound('image');
      if (state.is_public === command.is_public) return [];
      return [{ type: 'ImageVisibilityChanged', data: { image_id: state.image_id!, is_public: command.is_public, changed_at: command.now } }];
    case 'UseImage':
      // Once claimed, a use stands (the API and the worker both claim it); a released VM never holds it again.
      if (command.vm_id in state.uses) return [];
      if (state.status !== 'completed' || (state.org_id !== command.org_id && !state.is_public)) throw notFound('image');
      return [{ type: 'ImageUsedByVm', data: { image_id: state.image_id!, vm_id: command.vm_id, used_at: command.now } }];
    case 'ReleaseImage':
      if (state.uses[command.vm_id] !== true) return [];
      return [{ type: 'ImageReleasedByVm', data: { image_id: state.image_id!, vm_id: command.vm_id, released_at: command.now } }];
    case 'DeleteImage': {
      if (unfinished(state)) throw conflict(`image '${state.image_name}' is still being created`);
      if (state.status !== 'completed') throw notFound('image');
      const active = activeVmCount(state);
      if (active > 0) throw conflict(`image is in use by ${active} VM(s); delete them first`);
      return [{ type: 'ImageDeleted', data: { image_id: state.image_id!, deleted_at: command.now } }];
    }
  }
}

function evolve(state: ImageState, event: ImageEvent): ImageState {
  switch (event.type) {
    case 'ImageCreationRequested': {
      const { image_id, org_id, owner_id, image_name, source, size_mib, size_rule, description } = event.data;
      return { ...initialState(), status: 'pending', image_id, org_id, owner_id, image_name, source, size_mib, size_rule, description };
    }
    case 'ImageBuildStarted':
      return { ...state, status: 'creating', worker_id: event.data.worker_id, attempt: event.data.attempt, stage: 'pending' };
    case 'ImageBuildProgressed':
      return { ...state, stage: event.data.stage };
    case 'ImageCreated':
      return { ...state, status: 'completed', built_size_mib: event.data.size_mib };
    case 'ImageCreationFailed':
      return { ...state, status: 'failed', error: event.data.reason };
    case 'ImageVisibilityChanged':
      return { ...state, is_public: event.data.is_public };
    case 'ImageUsedByVm':
      return { ...state, uses: { ...state.uses, [event.data.vm_id]: true } };
    case 'ImageReleasedByVm':
      return { ...state, uses: { ...state.uses, [event.data.vm_id]: false } };
    case 'ImageDeleted':
      return { ...state, status: 'deleted' };
  }
}

export const imageDecider: Decider<ImageCommand, ImageState, ImageEvent> = { initialState, decide, evolve };
