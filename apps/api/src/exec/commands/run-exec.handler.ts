import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { EXEC_LOST_EXIT_CODE } from '@arbor/domain';
import { HttpError } from '../../http/http-error';
import { ExecFollower } from '../exec-follower';
import { ExecRequests } from '../exec-requests';
import type { SyncExecAnswer } from '../sync-exec-body';
import { RunExecCommand } from './run-exec.command';

/**
 * Runs the command and waits for its end, holding none of its output (the body is read from the
 * log afterwards). An exec lost with its worker (it started, the worker restarted, it was not run
 * again) answers 200 with what was recorded, exit code -1 and a note on stderr saying so, and its
 * exec_id: a definite answer a retry gets again, not a 5xx clients would retry.
 */
@CommandHandler(RunExecCommand)
export class RunExecHandler implements ICommandHandler<RunExecCommand> {
  constructor(
    private readonly requests: ExecRequests,
    private readonly follower: ExecFollower,
  ) {}

  async execute({ context, vm_id, body, signal }: RunExecCommand): Promise<SyncExecAnswer> {
    const org_id = context.principal.org_id;
    const { exec_id, key } = await this.requests.request(org_id, vm_id, body, context.command);
    const shown = body.exec_id ? exec_id : null;
    const items = await this.follower.follow(org_id, vm_id, key, { after: 0, shownExecId: shown, signal });
    for await (const item of items) {
      if (item.kind !== 'line') continue;
      const line = item.line;
      if (line.type === 'exit') return { key, exit_code: line.exit_code, exec_id: shown, stderrNote: null };
      if (line.type === 'error' && line.code === 'exec_lost') {
        return { key, exit_code: EXEC_LOST_EXIT_CODE, exec_id, stderrNote: `\narbor: exec ${exec_id} was cut off: ${line.message}\n` };
      }
      if (line.type === 'error') throw new HttpError(500, line.message);
    }
    if (signal.aborted) throw new HttpError(499, 'the client went away');
    throw new HttpError(500, `exec ${exec_id} ended without an exit`);
  }
}
