import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiOkResponse, ApiCreatedResponse, ApiQuery, ApiTags } from '@nestjs/swagger';
import {
  ResizeVmDiskRequestDto,
  VmCommitRequestDto,
  VmCommitResponseDto,
  NewRootRequestDto,
  NewVmResponseDto,
  UpdateVmLabelsRequestDto,
  UpdateVmStateRequestDto,
  VmDeleteResponseDto,
  VmDto,
  VmMetadataResponseDto,
} from '@arbor/contracts';
import { AnyMember, Changes } from '../auth/changes.decorator';
import { Ctx, type RequestContext } from '../auth/request-context.decorator';
import { queryBoolean } from '../http/query-booleans';
import { UuidParamPipe } from '../http/uuid-param.pipe';
import { ApiAsOfQuery, type AsOf, AsOfPipe } from '../time-travel/as-of';
import { ChangeVmStateCommand } from './commands/change-vm-state.command';
import { CommitVmCommand } from './commands/commit-vm.command';
import { ResizeVmDiskCommand } from './commands/resize-vm-disk.command';
import { CreateRootVmCommand } from './commands/create-root-vm.command';
import { DeleteVmCommand } from './commands/delete-vm.command';
import { SetVmLabelsCommand } from './commands/set-vm-labels.command';
import { GetVmMetadataQuery, GetVmStatusQuery } from './queries/get-vm.query';

/** `/api/v1/vm/…`: HTTP in, commands and queries out; nothing else lives here. */
@ApiTags('vm')
@ApiBearerAuth()
@Controller('api/v1/vm')
export class VmController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  @AnyMember('creates a VM of the caller')
  @Post('new_root')
  @HttpCode(201)
  @ApiQuery({ name: 'wait_boot', required: false, type: Boolean })
  @ApiCreatedResponse({ type: NewVmResponseDto })
  newRoot(@Ctx() ctx: RequestContext, @Body() body: NewRootRequestDto, @Query('wait_boot') waitBoot?: string): Promise<NewVmResponseDto> {
    return this.commands.execute(new CreateRootVmCommand(ctx, body.vm_config, queryBoolean('wait_boot', waitBoot)));
  }

  @Get(':vm_id/status')
  @ApiOkResponse({ type: VmDto })
  @ApiAsOfQuery()
  status(@Ctx() ctx: RequestContext, @Param('vm_id', UuidParamPipe) vmId: string, @Query('as_of', AsOfPipe) asOf?: AsOf): Promise<VmDto> {
    return this.queries.execute(new GetVmStatusQuery(ctx.principal.org_id, vmId, asOf));
  }

  @Get(':vm_id/metadata')
  @ApiOkResponse({ type: VmMetadataResponseDto })
  @ApiAsOfQuery()
  metadata(@Ctx() ctx: RequestContext, @Param('vm_id', UuidParamPipe) vmId: string, @Query('as_of', AsOfPipe) asOf?: AsOf): Promise<VmMetadataResponseDto> {
    return this.queries.execute(new GetVmMetadataQuery(ctx.principal.org_id, vmId, asOf));
  }

  @Changes('vm')
  @Patch(':vm_id/state')
  @HttpCode(200)
  @ApiQuery({ name: 'skip_wait_boot', required: false, type: Boolean })
  @ApiOkResponse({ description: 'Empty body' })
  async state(
    @Ctx() ctx: RequestContext,
    @Param('vm_id', UuidParamPipe) vmId: string,
    @Body() body: UpdateVmStateRequestDto,
    @Query('skip_wait_boot') skipWaitBoot?: string,
  ): Promise<void> {
    await this.commands.execute(new ChangeVmStateCommand(ctx, vmId, body.state, queryBoolean('skip_wait_boot', skipWaitBoot)));
  }

  @Changes('vm')
  @Post(':vm_id/commit')
  @HttpCode(201)
  @ApiQuery({ name: 'keep_paused', required: false, type: Boolean })
  @ApiQuery({ name: 'skip_wait_boot', required: false, type: Boolean })
  @ApiCreatedResponse({ type: VmCommitResponseDto, description: 'Disk and, on drivers that can (qemu), memory' })
  commit(
    @Ctx() ctx: RequestContext,
    @Param('vm_id', UuidParamPipe) vmId: string,
    @Body() body: VmCommitRequestDto,
    @Query('keep_paused') keepPaused?: string,
    @Query('skip_wait_boot') skipWaitBoot?: string,
  ): Promise<VmCommitResponseDto> {
    return this.commands.execute(new CommitVmCommand(ctx, vmId, body ?? {}, queryBoolean('keep_paused', keepPaused), queryBoolean('skip_wait_boot', skipWaitBoot)));
  }

  @Changes('vm')
  @Patch(':vm_id/disk')
  @HttpCode(200)
  @ApiQuery({ name: 'skip_wait_boot', required: false, type: Boolean })
  @ApiOkResponse({ description: 'Empty body; the new size is visible to df in the guest' })
  async disk(
    @Ctx() ctx: RequestContext,
    @Param('vm_id', UuidParamPipe) vmId: string,
    @Body() body: ResizeVmDiskRequestDto,
    @Query('skip_wait_boot') skipWaitBoot?: string,
  ): Promise<void> {
    await this.commands.execute(new ResizeVmDiskCommand(ctx, vmId, body.fs_size_mib, queryBoolean('skip_wait_boot', skipWaitBoot)));
  }

  @Changes('vm')
  @Patch(':vm_id/label')
  @HttpCode(200)
  @ApiOkResponse({ description: 'Empty body' })
  async label(@Ctx() ctx: RequestContext, @Param('vm_id', UuidParamPipe) vmId: string, @Body() body: UpdateVmLabelsRequestDto): Promise<void> {
    await this.commands.execute(new SetVmLabelsCommand(ctx, vmId, body?.labels ?? null));
  }

  @Changes('vm')
  @Delete(':vm_id')
  @HttpCode(200)
  @ApiQuery({ name: 'skip_wait_boot', required: false, type: Boolean })
  @ApiOkResponse({ type: VmDeleteResponseDto })
  delete(@Ctx() ctx: RequestContext, @Param('vm_id', UuidParamPipe) vmId: string, @Query('skip_wait_boot') skipWaitBoot?: string): Promise<VmDeleteResponseDto> {
    return this.commands.execute(new DeleteVmCommand(ctx, vmId, queryBoolean('skip_wait_boot', skipWaitBoot)));
  }
}
