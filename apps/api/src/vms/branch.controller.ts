import { Body, Controller, HttpCode, Param, Post, Query } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiCreatedResponse, ApiQuery, ApiTags } from '@nestjs/swagger';
import { FromCommitVmRequestDto, NewVmResponseDto, NewVmsResponseDto } from '@arbor/contracts';
import { AnyMember, Changes } from '../auth/changes.decorator';
import { Ctx, type RequestContext } from '../auth/request-context.decorator';
import { HttpError } from '../http/http-error';
import { queryBoolean } from '../http/query-booleans';
import { UuidParamPipe } from '../http/uuid-param.pipe';
import type { CommitSource } from '../commits/commit-source-resolver';
import { BranchVmsCommand, type BranchSource } from './commands/branch-vms.command';
import { CreateVmFromCommitCommand } from './commands/create-vm-from-commit.command';

/** count is an unsigned 8-bit integer on the contract's server: 0–255, default 1. */
function parseCount(value: string | undefined): number {
  if (value === undefined || value === '') return 1;
  if (!/^\d+$/.test(value) || Number(value) > 255) throw new HttpError(400, 'Failed to deserialize query string: count must be an integer from 0 to 255');
  return Number(value);
}

const BRANCH_QUERIES = [
  ApiQuery({ name: 'count', required: false, type: Number, description: 'How many VMs (0-255, default 1)' }),
  ApiQuery({ name: 'keep_paused', required: false, type: Boolean, description: 'Leave the source VM paused after its commit' }),
  ApiQuery({ name: 'skip_wait_boot', required: false, type: Boolean, description: 'Fail instead of waiting for a booting source, and do not wait for the children to boot' }),
];
const applyAll = (decorators: MethodDecorator[]): MethodDecorator => (target, key, descriptor) => {
  decorators.forEach((decorate) => decorate(target, key, descriptor));
};

/**
 * New VMs from commits: from_commit and the branch family. On the sandbox driver a branch copies
 * the filesystem and starts fresh processes; on qemu it keeps the source's running processes.
 */
@ApiTags('vm')
@ApiBearerAuth()
@Controller('api/v1/vm')
export class BranchController {
  constructor(private readonly commands: CommandBus) {}

  @AnyMember('creates a VM of the caller from a commit the org may read')
  @Post('from_commit')
  @HttpCode(201)
  @ApiCreatedResponse({ type: NewVmResponseDto })
  fromCommit(@Ctx() ctx: RequestContext, @Body() body: FromCommitVmRequestDto): Promise<NewVmResponseDto> {
    const given = (['commit_id', 'tag_name', 'ref'] as const).filter((field) => body[field] !== undefined && body[field] !== null);
    if (given.length !== 1) throw new HttpError(400, 'exactly one of commit_id, tag_name or ref is required');
    const field = given[0];
    const source = { [field]: field === 'commit_id' ? body[field]!.toLowerCase() : body[field]! } as CommitSource;
    return this.commands.execute(new CreateVmFromCommitCommand(ctx, source));
  }

  @Changes('vm')
  @Post('branch/by_vm/:vm_id')
  @HttpCode(201)
  @applyAll(BRANCH_QUERIES)
  @ApiCreatedResponse({ type: NewVmsResponseDto, description: 'Commits the VM, then starts `count` VMs from that commit' })
  byVm(@Ctx() ctx: RequestContext, @Param('vm_id', UuidParamPipe) vmId: string, @Query() q: Record<string, string>): Promise<NewVmsResponseDto> {
    return this.branch(ctx, { vm_id: vmId }, q);
  }

  @AnyMember('creates VMs of the caller from a commit the org may read')
  @Post('branch/by_commit/:commit_id')
  @HttpCode(201)
  @applyAll(BRANCH_QUERIES)
  @ApiCreatedResponse({ type: NewVmsResponseDto })
  byCommit(@Ctx() ctx: RequestContext, @Param('commit_id', UuidParamPipe) commitId: string, @Query() q: Record<string, string>): Promise<NewVmsResponseDto> {
    return this.branch(ctx, { commit_id: commitId }, q);
  }

  @AnyMember('creates VMs of the caller from a commit the org may read')
  @Post('branch/by_tag/:tag_name')
  @HttpCode(201)
  @applyAll(BRANCH_QUERIES)
  @ApiCreatedResponse({ type: NewVmsResponseDto })
  byTag(@Ctx() ctx: RequestContext, @Param('tag_name') tagName: string, @Query() q: Record<string, string>): Promise<NewVmsResponseDto> {
    return this.branch(ctx, { tag_name: tagName }, q);
  }

  @AnyMember('creates VMs of the caller from a commit the org may read')
  @Post('branch/by_ref/:repo_name/:tag_name')
  @HttpCode(201)
  @applyAll(BRANCH_QUERIES)
  @ApiCreatedResponse({ type: NewVmsResponseDto })
  byRef(@Ctx() ctx: RequestContext, @Param('repo_name') repo: string, @Param('tag_name') tag: string, @Query() q: Record<string, string>): Promise<NewVmsResponseDto> {
    return this.branch(ctx, { repo, tag }, q);
  }

  @Changes('vm_or_commit')
  @Post(':vm_or_commit_id/branch')
  @HttpCode(201)
  @applyAll(BRANCH_QUERIES)
  @ApiCreatedResponse({ type: NewVmsResponseDto, description: 'The id may name a live VM (committed first) or a commit' })
  polymorphic(@Ctx() ctx: RequestContext, @Param('vm_or_commit_id', UuidParamPipe) id: string, @Query() q: Record<string, string>): Promise<NewVmsResponseDto> {
    return this.branch(ctx, { vm_or_commit_id: id }, q);
  }

  private branch(ctx: RequestContext, source: BranchSource, q: Record<string, string>): Promise<NewVmsResponseDto> {
    const command = new BranchVmsCommand(ctx, source, parseCount(q.count), queryBoolean('keep_paused', q.keep_paused), queryBoolean('skip_wait_boot', q.skip_wait_boot));
    return this.commands.execute(command);
  }
}
