import { causedBy, type AggregateRepository } from '@arbor/application';
import { Exec, fold, type ExecCommand, type ExecEvent, type ExecState } from '@arbor/domain';
import { WrongExpectedVersionError, type RecordedEvent } from '@arbor/event-store';

const MAX_ATTEMPTS = 5;

/**
 * Appends the worker's outcomes to one exec stream (`exec-<key>`) through the exec decider. It keeps the folded
 * state and revision between appends (a chatty command appends many batches; re-reading the whole
 * stream each time would be quadratic) and re-reads only when someone else appended meanwhile.
 * Outcomes carry the request's correlation id, the ExecRequested event as causation, and its org.
 */
export class ExecRecorder {
  private constructor(
    private readonly aggregates: AggregateRepository,
    readonly key: string,
    private readonly intent: RecordedEvent,
    private current: ExecState,
    private revision: number,
  ) {}

  /** The exec as the log tells it, or null when there is no such exec. */
  static async load(aggregates: AggregateRepository, key: string): Promise<ExecRecorder | null> {
    const { state, revision, recorded } = await aggregates.load(Exec, key);
    return recorded.length ? new ExecRecorder(aggregates, key, recorded[0], state, revision) : null;
  }

  get state(): ExecState {
    return this.current;
  }

  /** Decides and appends; returns the events appended (none when the exec no longer wants them). */
  async record(command: ExecCommand): Promise<ExecEvent[]> {
    for (let attempt = 1; ; attempt++) {
      const decided = Exec.decider.decide(command, this.current);
      if (!decided.length) return decided;
      // Keyed by what came before, so a retried append carries the same event ids.
      const context = causedBy(this.intent, command.type, String(this.revision));
      try {
        const result = await this.aggregates.append(Exec.stream(this.key), decided, context, this.revision);
        this.current = fold(Exec.decider, decided, this.current);
        this.revision = result.next_expected_revision;
        return decided;
      } catch (error) {
        if (!(error instanceof WrongExpectedVersionError) || attempt >= MAX_ATTEMPTS) throw error;
        ({ state: this.current, revision: this.revision } = await this.aggregates.load(Exec, this.key));
      }
    }
  }
}
