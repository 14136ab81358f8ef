import { Inject, Injectable } from '@nestjs/common';
import { AggregateRepository, type ArborConfig, ARBOR_CONFIG, ProjectionWaiter, WaitTimeoutError } from '@arbor/application';
import { Exec, type ExecExited, type ExecFailed, type ExecOutput, notFound } from '@arbor/domain';
import { EVENT_STORE, type EventStore } from '@arbor/event-store';
import { HttpError } from '../http/http-error';
import { chunkLine, errorLine, exitLine, type ExecStreamItem } from './exec-lines';
import { tailExecStream } from './exec-stream-tail';

export interface FollowExecOptions {
  /** Only output with a cursor strictly greater than this (0: the whole backlog); 'latest': none of the backlog. */
  after: number | 'latest';
  /** What the lines say as exec_id: null when the client did not name the exec. */
  shownExecId: string | null;
  /** Aborts when the client goes away; the exec itself runs on. */
  signal: AbortSignal;
}

/**
 * Follows an exec through its stream: a catch-up read of the backlog, then new output as the
 * worker appends it, ending with the exit. Output comes from the log, not from the running
 * process, so any API process can serve it, after disconnects and restarts alike.
 */
@Injectable()
export class ExecFollower {
  constructor(
    @Inject(EVENT_STORE) private readonly events: EventStore,
    private readonly aggregates: AggregateRepository,
    @Inject(ARBOR_CONFIG) private readonly config: ArborConfig,
    private readonly projection: ProjectionWaiter,
  ) {}

  /** Checks the exec belongs to this org and VM (404 "exec not found" otherwise), then follows it. */
  async follow(org_id: string, vm_id: string, exec_id: string, options: FollowExecOptions): Promise<AsyncIterable<ExecStreamItem>> {
    const { state } = await this.aggregates.load(Exec, exec_id);
    if (!state.request || state.request.org_id !== org_id || state.request.vm_id !== vm_id) throw notFound('exec');
    const after = options.after === 'latest' ? state.last_cursor : options.after;
    return this.items(exec_id, state.status !== 'requested', after, options);
  }

  private async *items(exec_id: string, started: boolean, after: number, options: FollowExecOptions): AsyncGenerator<ExecStreamItem> {
    // Until the worker takes the command, bound the wait (a stopped worker must not hang the client).
    const tail = new AbortController();
    const stopTail = () => tail.abort();
    options.signal.addEventListener('abort', stopTail);
    let timedOut = false;
    const startTimer = started
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          tail.abort();
        }, this.config.waitTimeoutMs);
    let opened = false;
    const open = function* (): Generator<ExecStreamItem> {
      if (opened) return;
      opened = true;
      clearTimeout(startTimer);
      yield { kind: 'open' };
    };
    try {
      if (started) yield* open();
      // Cursor c is at revision c + 1 at the earliest (after ExecRequested and ExecStarted).
      for await (const event of tailExecStream(this.events, exec_id, after, tail.signal)) {
        switch (event.type) {
          case 'ExecStarted':
            yield* open();
            break;
          case 'ExecOutput': {
            yield* open();
            const data = event.data as ExecOutput['data'];
            if (data.cursor > after) yield { kind: 'line', line: chunkLine(options.shownExecId, data) };
            break;
          }
          case 'ExecExited':
            await this.projection.waitFor(event.position); // logs read right after see every chunk
            yield* open();
            yield { kind: 'line', line: exitLine(options.shownExecId, event.data as ExecExited['data']) };
            return;
          case 'ExecFailed': {
            await this.projection.waitFor(event.position);
            const data = event.data as ExecFailed['data'];
            // Never started: the VM could not run it, answered before any output as an error.
            if (!opened) throw new HttpError(409, `exec could not run: ${data.reason}`);
            yield { kind: 'line', line: errorLine(options.shownExecId, data) };
            return;
          }
        }
      }
      if (timedOut) throw new WaitTimeoutError(`the worker to start exec ${exec_id}`, this.config.waitTimeoutMs);
    } finally {
      clearTimeout(startTimer);
      options.signal.removeEventListener('abort', stopTail);
    }
  }
}
