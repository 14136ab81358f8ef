import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { CommitSourceResolver } from '../../commits/commit-source-resolver';
import { VmFactory } from '../vm-factory';
import { CreateVmFromCommitCommand } from './create-vm-from-commit.command';

/**
 * from_commit is a single creation, not a branch: it answers `{vm_id}` or a plain error
 * (400 for a malformed ref, 404 for an unknown or unreadable commit, tag or repository).
 */
@CommandHandler(CreateVmFromCommitCommand)
export class CreateVmFromCommitHandler implements ICommandHandler<CreateVmFromCommitCommand> {
  constructor(
    private readonly resolver: CommitSourceResolver,
    private readonly factory: VmFactory,
  ) {}

  async execute({ context, source }: CreateVmFromCommitCommand): Promise<{ vm_id: string }> {
    const resolved = await this.resolver.resolve(context.principal.org_id, source);
    await this.factory.reserve(context, [resolved.commit.config]);
    let vm_id = '';
    // VMs from a commit start from its snapshot and are running at once: wait for that, as a branch does.
    await this.factory.createAll(context, [{ config: resolved.commit.config, labels: null, source: resolved, env: await this.factory.envOf(context) }], true, (id) => (vm_id = id));
    return { vm_id };
  }
}
