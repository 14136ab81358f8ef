import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiAcceptedResponse, ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { DeployRequestDto, DeployResponseDto } from '@arbor/contracts';
import { AnyMember } from '../auth/changes.decorator';
import { Ctx, type RequestContext } from '../auth/request-context.decorator';
import { DeployCommand } from './commands/deploy.command';

/**
 * Deploy (`POST /api/v1/deploy`): a repository of the configured git host (ARBOR_GIT_BASE_URL)
 * into a new VM of the caller's, where its install, build and run commands run as the VM's execs.
 * Answers 202 once the VM (booting) and the project (cloning) are readable; the worker does the rest.
 */
@ApiTags('deploy')
@ApiBearerAuth()
@Controller('api/v1/deploy')
export class DeployController {
  constructor(private readonly commands: CommandBus) {}

  @AnyMember('deploys into a new VM of the caller\'s own, like new_root')
  @Post()
  @HttpCode(202)
  @ApiAcceptedResponse({
    type: DeployResponseDto,
    description:
      "400 for a repo that is not owner/repo, a bad branch name, name or settings; 403 past the org's quota; 404 for a repository or branch the git host does not have (or does not show Arbor's credentials); 409 for a name a project of the org holds (until its VM is deleted); 422 for a body of the wrong shape",
  })
  deploy(@Ctx() ctx: RequestContext, @Body() body: DeployRequestDto): Promise<DeployResponseDto> {
    return this.commands.execute(new DeployCommand(ctx, body));
  }
}
