import { Command } from '@nestjs/cqrs';
import type { DeployRequestDto, DeployResponseDto } from '@arbor/contracts';
import type { RequestContext } from '../../auth/request-context.decorator';

/** POST /deploy: a repository of the git host, cloned into a new VM of the caller's, installed, built and run. */
export class DeployCommand extends Command<DeployResponseDto> {
  constructor(
    readonly context: RequestContext,
    readonly request: DeployRequestDto,
  ) {
    super();
  }
}
