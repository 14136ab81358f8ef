import { Controller, Delete, Get, HttpCode, Param, Put } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiBody, ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { EnvVarsResponseDto, SetEnvVarsRequestDto } from '@arbor/contracts';
import { AnyMember } from '../auth/changes.decorator';
import { Ctx, type RequestContext } from '../auth/request-context.decorator';
import { DeleteEnvVarCommand, SetEnvVarsCommand } from './commands/env-var.commands';
import { EnvVarsBody } from './env-vars-body';
import { GetEnvVarsQuery } from './queries/get-env-vars.query';

/**
 * The calling key's environment variables: written into /etc/environment of every VM it creates
 * from then on (new_root, from_commit, every branch); running VMs keep what they booted with.
 */
@ApiTags('env_vars')
@ApiBearerAuth()
@Controller('api/v1/env_vars')
export class EnvVarsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  @Get()
  @ApiOkResponse({ type: EnvVarsResponseDto })
  list(@Ctx() ctx: RequestContext): Promise<EnvVarsResponseDto> {
    return this.queries.execute(new GetEnvVarsQuery(ctx.principal.key_id));
  }

  @AnyMember("changes the caller's own env vars")
  @Put()
  @ApiBody({ type: SetEnvVarsRequestDto })
  @ApiOkResponse({ type: EnvVarsResponseDto, description: 'The complete set after the change; 400 naming the key for a bad key or value' })
  set(@Ctx() ctx: RequestContext, @EnvVarsBody() body: SetEnvVarsRequestDto): Promise<EnvVarsResponseDto> {
    return this.commands.execute(new SetEnvVarsCommand(ctx, body.vars, body.replace ?? false));
  }

  @AnyMember("changes the caller's own env vars")
  @Delete(':key')
  @HttpCode(204)
  @ApiNoContentResponse({ description: '404 "Environment variable not found" when the key is not set' })
  async delete(@Ctx() ctx: RequestContext, @Param('key') key: string): Promise<void> {
    await this.commands.execute(new DeleteEnvVarCommand(ctx, key));
  }
}
