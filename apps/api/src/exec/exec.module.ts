import { Module } from '@nestjs/common';
import { VmsModule } from '../vms/vms.module';
import { RunExecHandler } from './commands/run-exec.handler';
import { StreamExecHandler } from './commands/stream-exec.handler';
import { ExecController } from './exec.controller';
import { ExecFollower } from './exec-follower';
import { ExecRequests } from './exec-requests';
import { AttachExecHandler } from './queries/attach-exec.handler';
import { GetExecLogsHandler } from './queries/get-exec-logs.handler';

/** Exec: sync, streamed and attached runs of commands in a VM, and the VM's exec logs. */
@Module({
  imports: [VmsModule],
  controllers: [ExecController],
  providers: [ExecRequests, ExecFollower, RunExecHandler, StreamExecHandler, AttachExecHandler, GetExecLogsHandler],
})
export class ExecModule {}
