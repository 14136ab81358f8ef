import type { Aggregate, DomainCommand, DomainEvent } from '@arbor/domain';
import type { AggregateRepository, HandledCommand } from './aggregate-repository';
import type { CommandContext } from './command-context';

/**
 * What runs a command on an aggregate: `Operations` in the api (it answers once the read models
 * show the change), or the aggregate repository itself where nothing reads them back at once
 * (the operator command, the first start).
 */
export interface CommandRunner {
  run<Id, C extends DomainCommand, S, E extends DomainEvent>(aggregate: Aggregate<Id, C, S, E>, id: Id, command: C, context: CommandContext): Promise<HandledCommand<E>>;
}

/** Commands appended without waiting for the read models. */
export function directRunner(aggregates: AggregateRepository): CommandRunner {
  return { run: (aggregate, id, command, context) => aggregates.handle(aggregate, id, command, context) };
}
