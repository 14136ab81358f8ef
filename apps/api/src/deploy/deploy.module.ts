import { Module } from '@nestjs/common';
import { VmsModule } from '../vms/vms.module';
import { DeployHandler } from './commands/deploy.handler';
import { DeployController } from './deploy.controller';
import { ProjectReadModel } from './project-read-model';
import { ProjectsController } from './projects.controller';

/** Deploys (`POST /api/v1/deploy`) and their projects (`/arbor/v1/projects`). */
@Module({ imports: [VmsModule], controllers: [DeployController, ProjectsController], providers: [DeployHandler, ProjectReadModel] })
export class DeployModule {}
