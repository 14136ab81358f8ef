import { Injectable } from '@nestjs/common';
import { AggregateRepository, type CommandContext } from '@arbor/application';
import type { VmExecRequestDto } from '@arbor/contracts';
import { deterministicUuid, Exec, execKey } from '@arbor/domain';
import { VmReadModel } from '../vms/vm-read-model';

/** An exec as the log knows it: its id (the client's, or one made up) and its stream's key. */
export interface RequestedExec {
  exec_id: string;
  key: string;
}

/** Appends an ExecRequested for the worker: the one write every exec starts with. */
@Injectable()
export class ExecRequests {
  constructor(
    private readonly aggregates: AggregateRepository,
    private readonly vms: VmReadModel,
  ) {}

  /**
   * Waits out a boot, refuses a VM that is not running (409), and returns the exec. Its stream is
   * the org's (exec-<org>-<id>): another org's exec of the same id is neither met nor in the way.
   */
  async request(org_id: string, vm_id: string, body: VmExecRequestDto, context: CommandContext): Promise<RequestedExec> {
    await this.vms.requireRunning(org_id, vm_id);
    // Every exec has an id; without the client's, it derives from the command (a retry reuses it).
    const exec_id = body.exec_id?.toLowerCase() ?? deterministicUuid(context.command_id, 'exec');
    const key = execKey(org_id, exec_id);
    // A retry of this very request (same X-Idempotency-Key) gets the exec it already started back.
    await this.aggregates.handle(
      Exec,
      key,
      {
        type: 'RequestExec',
        exec_id,
        vm_id,
        org_id,
        command: body.command,
        env: body.env ?? null,
        working_dir: body.working_dir ?? null,
        stdin: body.stdin ?? null,
        timeout_secs: body.timeout_secs ?? 0,
        now: new Date().toISOString(),
      },
      context,
    );
    return { exec_id, key };
  }
}
