import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import { AggregateRepository, envVarsOf, Operations } from '@arbor/application';
import type { EnvVarsResponseDto } from '@arbor/contracts';
import { EnvVars } from '@arbor/domain';
import { DeleteEnvVarCommand, SetEnvVarsCommand } from './env-var.commands';

/** The env vars belong to the key (`owner_id` of what it creates), on the stream `envvars-<key id>`. */
@CommandHandler(SetEnvVarsCommand)
export class SetEnvVarsHandler implements ICommandHandler<SetEnvVarsCommand> {
  constructor(
    private readonly operations: Operations,
    private readonly aggregates: AggregateRepository,
  ) {}

  async execute({ context, vars, replace }: SetEnvVarsCommand): Promise<EnvVarsResponseDto> {
    const owner_id = context.principal.key_id;
    await this.operations.run(EnvVars, owner_id, { type: 'SetEnvVars', owner_id, vars, replace, now: new Date().toISOString() }, context.command);
    return { vars: await envVarsOf(this.aggregates, owner_id) };
  }
}

@CommandHandler(DeleteEnvVarCommand)
export class DeleteEnvVarHandler implements ICommandHandler<DeleteEnvVarCommand> {
  constructor(private readonly operations: Operations) {}

  async execute({ context, key }: DeleteEnvVarCommand): Promise<void> {
    const owner_id = context.principal.key_id;
    await this.operations.run(EnvVars, owner_id, { type: 'DeleteEnvVar', owner_id, key, now: new Date().toISOString() }, context.command);
  }
}
