import { Inject, Injectable } from '@nestjs/common';
import { notFound } from '@arbor/domain';
import { PROJECTS_COLLECTION, READ_MODEL_STORE, type ProjectDocument, type ReadModelStore } from '@arbor/read-models';

/** Reads of the `projects` read model; another org's project is reported like a missing one. */
@Injectable()
export class ProjectReadModel {
  constructor(@Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore) {}

  /** Oldest first. */
  list(org_id: string): Promise<ProjectDocument[]> {
    return this.readModels.find<ProjectDocument>(PROJECTS_COLLECTION, { org_id }, { sort: { created_at: 1, _id: 1 } });
  }

  async get(org_id: string, project_id: string): Promise<ProjectDocument> {
    const project = await this.readModels.findOne<ProjectDocument>(PROJECTS_COLLECTION, { _id: project_id });
    if (!project || project.org_id !== org_id) throw notFound('project');
    return project;
  }
}
