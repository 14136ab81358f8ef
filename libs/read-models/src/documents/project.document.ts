/** Collection `projects`: one document per deploy (`POST /deploy`), `_id` = project id. */
export const PROJECTS_COLLECTION = 'projects';

/** `deleted` is the read model's own: the project's VM is gone (its name is free again). */
export type ProjectStatusValue = 'cloning' | 'installing' | 'building' | 'starting' | 'running' | 'ready' | 'failed' | 'stopped' | 'deleted';

export interface ProjectDocument {
  _id: string;
  project_id: string;
  org_id: string;
  name: string;
  repo: string;
  branch: string;
  commit_sha: string;
  vm_id: string;
  status: ProjectStatusValue;
  reason: string | null;
  directory: string;
  working_dir: string;
  settings: { install_command: string | null; build_command: string | null; run_command: string | null; working_directory: string | null };
  steps: { step: string; exec_id: string; command: string; started_at: string }[];
  created_at: string;
  updated_at: string;
  [field: string]: unknown;
}
