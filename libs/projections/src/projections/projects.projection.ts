import { Project, Vm, type ProjectEvent, type VmEvent } from '@arbor/domain';
import { PROJECTS_COLLECTION, type ProjectDocument, type ProjectStatusValue, type WriteOp } from '@arbor/read-models';
import type { Projection } from './projection';

const STATUS_OF_STEP = { install: 'installing', build: 'building', run: 'starting' } as const;

/**
 * The `projects` read model: each deploy and where it stands (`GET /arbor/v1/projects`). The
 * project's own events move its status; its VM's deletion marks it `deleted`, which nothing the
 * project records afterwards (its run command's exec failing with the VM) turns back.
 */
export const projectsProjection: Projection = {
  name: 'projects',
  collections: [PROJECTS_COLLECTION],
  aggregates: [Project, Vm],
  indexes: [
    { collection: PROJECTS_COLLECTION, keys: { org_id: 1, created_at: 1, _id: 1 } },
    { collection: PROJECTS_COLLECTION, keys: { vm_id: 1 } },
  ],
  project(event: ProjectEvent | VmEvent): WriteOp[] {
    if (event.type === 'VmDeleted') {
      const update = { $set: { status: 'deleted', reason: 'its VM was deleted', updated_at: event.data.deleted_at } };
      return [{ op: 'updateMany', collection: PROJECTS_COLLECTION, filter: { vm_id: event.data.vm_id }, update }];
    }
    if (!event.type.startsWith('Project')) return [];
    const project = event as ProjectEvent;
    const { project_id } = project.data;
    const status = (status: ProjectStatusValue, at: string, fields: Partial<ProjectDocument> = {}, push?: Record<string, unknown>): WriteOp => ({
      op: 'updateOne',
      collection: PROJECTS_COLLECTION,
      filter: { _id: project_id, status: { $ne: 'deleted' } },
      update: push ? { $set: { status, updated_at: at, ...fields }, $push: push } : { $set: { status, updated_at: at, ...fields } },
    });
    switch (project.type) {
      case 'ProjectRequested': {
        const d = project.data;
        const doc: ProjectDocument = {
          _id: project_id,
          project_id,
          org_id: d.org_id,
          name: d.name,
          repo: d.repo,
          branch: d.branch,
          commit_sha: d.commit_sha,
          vm_id: d.vm_id,
          status: 'cloning',
          reason: null,
          directory: d.directory,
          working_dir: d.working_dir,
          settings: d.settings,
          steps: [],
          created_at: d.requested_at,
          updated_at: d.requested_at,
        };
        return [{ op: 'replaceOne', collection: PROJECTS_COLLECTION, filter: { _id: project_id }, doc, upsert: true }];
      }
      case 'ProjectSourceCopied':
        return [{ op: 'updateOne', collection: PROJECTS_COLLECTION, filter: { _id: project_id }, update: { $set: { commit_sha: project.data.commit_sha, updated_at: project.data.copied_at } } }];
      case 'ProjectStepStarted': {
        const { step, exec_id, command, started_at } = project.data;
        return [status(STATUS_OF_STEP[step], started_at, {}, { steps: { step, exec_id, command, started_at } })];
      }
      case 'ProjectRunning':
        return [status('running', project.data.running_at)];
      case 'ProjectReady':
        return [status('ready', project.data.ready_at)];
      case 'ProjectFailed':
        return [status('failed', project.data.failed_at, { reason: project.data.reason })];
      case 'ProjectRunFollowed':
        return [];
      case 'ProjectRunExited':
        return [status(project.data.exit_code === 0 ? 'stopped' : 'failed', project.data.exited_at, { reason: project.data.reason })];
    }
  },
};
