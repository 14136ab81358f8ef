import { Command } from '@nestjs/cqrs';
import type { EnvVarsResponseDto } from '@arbor/contracts';
import type { RequestContext } from '../../auth/request-context.decorator';

/** PUT /env_vars: `replace` false upserts `vars`, true keeps exactly `vars`. */
export class SetEnvVarsCommand extends Command<EnvVarsResponseDto> {
  constructor(
    readonly context: RequestContext,
    readonly vars: Record<string, string>,
    readonly replace: boolean,
  ) {
    super();
  }
}

/** DELETE /env_vars/{key}: 404 "Environment variable not found" when it is not set. */
export class DeleteEnvVarCommand extends Command<void> {
  constructor(
    readonly context: RequestContext,
    readonly key: string,
  ) {
    super();
  }
}
