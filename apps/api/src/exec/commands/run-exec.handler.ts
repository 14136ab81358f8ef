import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { VmExecResponseDto } from '@arbor/contracts';
import { HttpError } from '../../http/http-error';
import { ExecFollower } from '../exec-follower';
import { ExecRequests } from '../exec-requests';
import { RunExecCommand } from './run-exec.command';

@CommandHandler(RunExecCommand)
export class RunExecHandler implements ICommandHandler<RunExecCommand> {
  constructor(
    private readonly requests: ExecRequests,
    private readonly follower: ExecFollower,
  ) {}

  async execute({ context, vm_id, body }: RunExecCommand): Promise<VmExecResponseDto> {
    const org_id = context.principal.org_id;
    const exec_id = await this.requests.request(org_id, vm_id, body, context.command);
    const output = { stdout: [] as Buffer[], stderr: [] as Buffer[] };
    const items = await this.follower.follow(org_id, vm_id, exec_id, { after: 0, shownExecId: exec_id, signal: new AbortController().signal });
    for await (const item of items) {
      if (item.kind !== 'line') continue;
      const line = item.line;
      if (line.type === 'chunk') output[line.stream].push(Buffer.from(line.data_b64, 'base64'));
      if (line.type === 'error') throw new HttpError(500, line.message);
      if (line.type === 'exit') {
        // Decoded once all bytes are in: a character split across chunks stays whole.
        const response: VmExecResponseDto = {
          exit_code: line.exit_code,
          stdout: Buffer.concat(output.stdout).toString('utf8'),
          stderr: Buffer.concat(output.stderr).toString('utf8'),
        };
        if (body.exec_id) response.exec_id = exec_id;
        return response;
      }
    }
    throw new HttpError(500, `exec ${exec_id} ended without an exit`);
  }
}
