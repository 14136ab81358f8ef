import { Controller, Get, Param } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { VmSshKeyResponseDto } from '@arbor/contracts';
import { Changes } from '../auth/changes.decorator';
import { Ctx, type RequestContext } from '../auth/request-context.decorator';
import { UuidParamPipe } from '../http/uuid-param.pipe';
import { GetVmSshKeyQuery } from './queries/get-vm-ssh-key.query';

@ApiTags('vm')
@ApiBearerAuth()
@Controller('api/v1/vm')
export class SshKeysController {
  constructor(private readonly queries: QueryBus) {}

  @Changes('vm')
  @Get(':vm_id/ssh_key')
  @ApiOkResponse({ type: VmSshKeyResponseDto, description: "The VM's own Ed25519 key; its public half is authorized for root in the VM" })
  sshKey(@Ctx() ctx: RequestContext, @Param('vm_id', UuidParamPipe) vmId: string): Promise<VmSshKeyResponseDto> {
    return this.queries.execute(new GetVmSshKeyQuery(ctx.principal.org_id, vmId));
  }
}
