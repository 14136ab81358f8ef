import { Command } from '@nestjs/cqrs';
import type { DeleteDomainResponseDto, DomainResponseDto } from '@arbor/contracts';
import type { RequestContext } from '../../auth/request-context.decorator';

/** POST /domains: the name routed by the edge to the VM from now on. */
export class AddDomainCommand extends Command<DomainResponseDto> {
  constructor(
    readonly context: RequestContext,
    readonly vm_id: string,
    readonly domain: string,
  ) {
    super();
  }
}

/** DELETE /domains/{id}: the name is no longer routed, and is free for anyone to add. */
export class RemoveDomainCommand extends Command<DeleteDomainResponseDto> {
  constructor(
    readonly context: RequestContext,
    readonly domain_id: string,
  ) {
    super();
  }
}
