import { type ExecCommand, type ExecEvent, type ExecState, deterministicUuid, execDecider, streams } from '@arbor/domain';
import { toDomainEvent, toNewEvents } from '@arbor/application';
import { type EventStore, type RecordedEvent, WrongExpectedVersionError } from '@arbor/event-store';

const MAX_ATTEMPTS = 5;

/**
 * Appends the worker's outcomes to one exec stream through the exec decider. It keeps the folded
 * state and revision between appends (a chatty command appends many batches; re-reading the whole
 * stream each time would be quadratic) and re-reads only when someone else appended meanwhile.
 * Outcomes carry the request's correlation id, the ExecRequested event as causation, and its org.
 */
export class ExecRecorder {
  private constructor(
    private readonly events: EventStore,
    readonly exec_id: string,
    private readonly intent: RecordedEvent,
    private current: ExecState,
    private revision: number,
  ) {}

  /** The exec as the log tells it, or null when there is no such exec. */
  static async load(events: EventStore, exec_id: string): Promise<ExecRecorder | null> {
    const recorded = await events.readStream(streams.exec(exec_id));
    if (!recorded.length) return null;
    const state = recorded.map((r) => toDomainEvent<ExecEvent>(r)).reduce(execDecider.evolve, execDecider.initialState());
    return new ExecRecorder(events, exec_id, recorded[0], state, recorded[recorded.length - 1].revision);
  }

  get state(): ExecState {
    return this.current;
  }

  /** Decides and appends; returns the events appended (none when the exec no longer wants them). */
  async record(command: ExecCommand): Promise<ExecEvent[]> {
    for (let attempt = 1; ; attempt++) {
      const decided = execDecider.decide(command, this.current);
      if (!decided.length) return decided;
      const context = {
        // Keyed by what came before, so a retried append carries the same event ids.
        command_id: deterministicUuid(this.intent.id, command.type, String(this.revision)),
        correlation_id: this.intent.metadata.correlation_id,
        causation_id: this.intent.id,
        actor_key_id: null,
        org_id: this.intent.metadata.org_id,
      };
      try {
        const result = await this.events.append(streams.exec(this.exec_id), toNewEvents(decided, context), this.revision);
        this.current = decided.reduce(execDecider.evolve, this.current);
        this.revision = result.next_expected_revision;
        return decided;
      } catch (error) {
        if (!(error instanceof WrongExpectedVersionError) || attempt >= MAX_ATTEMPTS) throw error;
        const fresh = await ExecRecorder.load(this.events, this.exec_id);
        this.current = fresh!.current;
        this.revision = fresh!.revision;
      }
    }
  }
}
