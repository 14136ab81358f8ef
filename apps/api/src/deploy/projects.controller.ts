import { Controller, Get, Param } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { ListProjectsResponseDto, ProjectDto } from '@arbor/contracts';
import { Ctx, type RequestContext } from '../auth/request-context.decorator';
import { UuidParamPipe } from '../http/uuid-param.pipe';
import { presentProject } from './project-presenter';
import { ProjectReadModel } from './project-read-model';

/**
 * The org's deploys and where each stands, under Arbor's own prefix (the Vers API has no read of a
 * project: its CLI only follows the VM): `failed` with the reason, the steps' exec ids (their
 * output is the VM's logs). Another org's project answers 404.
 */
@ApiTags('deploy')
@ApiBearerAuth()
@Controller('arbor/v1/projects')
export class ProjectsController {
  constructor(private readonly projects: ProjectReadModel) {}

  @Get()
  @ApiOkResponse({ type: ListProjectsResponseDto, description: 'Oldest first' })
  async list(@Ctx() ctx: RequestContext): Promise<ListProjectsResponseDto> {
    return { projects: (await this.projects.list(ctx.principal.org_id)).map(presentProject) };
  }

  @Get(':project_id')
  @ApiOkResponse({ type: ProjectDto })
  async get(@Ctx() ctx: RequestContext, @Param('project_id', UuidParamPipe) projectId: string): Promise<ProjectDto> {
    return presentProject(await this.projects.get(ctx.principal.org_id, projectId));
  }
}
