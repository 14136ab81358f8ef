import type { Aggregate, DomainCommand, DomainEvent } from '@arbor/domain';
import { intentDuration, operationDuration, timed } from '@arbor/observability';
import type { AggregateRepository, HandledCommand } from './aggregate-repository';
import { awaitOutcome } from './await-outcome';
import type { CommandContext } from './command-context';
import { commandResult } from './command-result';
import type { CommandRunner } from './command-runner';
import type { ProjectionWaiter } from './projection-waiter';

/**
 * How the api carries out a command: decide and append it on its aggregate, then answer once its
 * effect is visible: the outcome of the intent it appended, by the aggregate's one rule for that
 * intent (Aggregate.outcomes), then the read models (read-your-writes). Waiting is by polling the
 * stores, so it works the same when the worker and the projector run in other processes.
 */
export class Operations implements CommandRunner {
  constructor(
    private readonly aggregates: AggregateRepository,
    private readonly projection: ProjectionWaiter,
    private readonly timeoutMs: number,
  ) {}

  /**
   * Runs the command; when it appends an intent, waits until that intent is done (a failure is
   * thrown: the rule's DomainError), else until the read models show what it appended.
   */
  run<Id, C extends DomainCommand, S, E extends DomainEvent>(
    aggregate: Aggregate<Id, C, S, E>,
    id: Id,
    command: C,
    context: CommandContext,
  ): Promise<HandledCommand<E>> {
    return timed(operationDuration, { aggregate: aggregate.name, command: command.type }, () => this.runAndWait(aggregate, id, command, context), commandResult);
  }

  private async runAndWait<Id, C extends DomainCommand, S, E extends DomainEvent>(
    aggregate: Aggregate<Id, C, S, E>,
    id: Id,
    command: C,
    context: CommandContext,
  ): Promise<HandledCommand<E>> {
    const result = await this.aggregates.handle(aggregate, id, command, context);
    const intent = result.events.findIndex((event) => aggregate.outcomes[event.type as E['type']]);
    if (intent < 0) {
      await this.projection.waitFor(result.position);
      return result;
    }
    const intentRevision = result.revision - (result.events.length - 1 - intent);
    await this.settle(aggregate, id, result.events[intent].type, intentRevision);
    return result;
  }

  /**
   * Waits for the first event after `afterRevision` that ends `intent` (see awaitOutcome), then
   * for the read models to show it and whatever was appended with it; throws when it ended in failure.
   */
  settle<Id, E extends DomainEvent>(aggregate: Aggregate<Id, any, any, E>, id: Id, intent: E['type'], afterRevision: number): Promise<void> {
    return timed(intentDuration, { aggregate: aggregate.name, intent }, async () => {
      const { outcome, position } = await awaitOutcome(this.aggregates.store, aggregate, id, intent, afterRevision, this.timeoutMs);
      await this.projection.waitFor(position);
      if (!outcome.succeeded) throw outcome.error;
    }, commandResult);
  }
}
