import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { ExecStreamItem } from '../exec-lines';
import { ExecFollower } from '../exec-follower';
import { ExecRequests } from '../exec-requests';
import { StreamExecCommand } from './stream-exec.command';

@CommandHandler(StreamExecCommand)
export class StreamExecHandler implements ICommandHandler<StreamExecCommand> {
  constructor(
    private readonly requests: ExecRequests,
    private readonly follower: ExecFollower,
  ) {}

  async execute({ context, vm_id, body, signal }: StreamExecCommand): Promise<AsyncIterable<ExecStreamItem>> {
    const org_id = context.principal.org_id;
    const { exec_id, key } = await this.requests.request(org_id, vm_id, body, context.command);
    // Lines say exec_id null unless the client named the exec (docs/api-behaviour.md#streaming-exec).
    return this.follower.follow(org_id, vm_id, key, { after: 0, shownExecId: body.exec_id ? exec_id : null, signal });
  }
}
