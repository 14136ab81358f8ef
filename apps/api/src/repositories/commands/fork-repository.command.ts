import { Command } from '@nestjs/cqrs';
import type { ForkRepositoryRequestDto, ForkRepositoryResponseDto } from '@arbor/contracts';
import type { RequestContext } from '../../auth/request-context.decorator';

/** POST /repositories/fork: a public repository tag, copied into the caller's org as a VM, a commit and a tag. */
export class ForkRepositoryCommand extends Command<ForkRepositoryResponseDto> {
  constructor(
    readonly context: RequestContext,
    readonly request: ForkRepositoryRequestDto,
  ) {
    super();
  }
}
