import type { ProjectDto } from '@arbor/contracts';
import type { ProjectDocument } from '@arbor/read-models';

export function presentProject(project: ProjectDocument): ProjectDto {
  const { project_id, name, repo, branch, commit_sha, vm_id, status, reason, directory, working_dir, settings, steps, created_at, updated_at } = project;
  return { project_id, name, repo, branch, commit_sha, vm_id, status, reason, directory, working_dir, settings, steps, created_at, updated_at };
}
