import { type IQueryHandler, Query, QueryHandler } from '@nestjs/cqrs';
import { AggregateRepository, envVarsOf } from '@arbor/application';
import type { EnvVarsResponseDto } from '@arbor/contracts';

/** GET /env_vars: the key's own set, read from its stream (one small stream, always current). */
export class GetEnvVarsQuery extends Query<EnvVarsResponseDto> {
  constructor(readonly owner_id: string) {
    super();
  }
}

@QueryHandler(GetEnvVarsQuery)
export class GetEnvVarsHandler implements IQueryHandler<GetEnvVarsQuery> {
  constructor(private readonly aggregates: AggregateRepository) {}

  async execute({ owner_id }: GetEnvVarsQuery): Promise<EnvVarsResponseDto> {
    return { vars: await envVarsOf(this.aggregates, owner_id) };
  }
}
