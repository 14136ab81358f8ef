import { Inject, Injectable } from '@nestjs/common';
import { type ArborConfig, ARBOR_CONFIG, ProjectionWaiter, WaitTimeoutError } from '@arbor/application';
import { Exec, execKey, legacyExecKey, notFound, type ExecExited, type ExecFailed, type ExecLost, type ExecOutput, type ExecRequested } from '@arbor/domain';
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
 * process, so any API process can serve it, after disconnects and restarts alike. It reads a page
 * of the stream at a time: an exec's whole output is never in the api's memory.
 */
@Injectable()
export class ExecFollower {
  constructor(
    @Inject(EVENT_STORE) private readonly events: EventStore,
    @Inject(ARBOR_CONFIG) private readonly config: ArborConfig,
    private readonly projection: ProjectionWaiter,
  ) {}

  /**
   * The stream key of the org's exec `exec_id`: its own (`exec-<org>-<id>`), or, for an exec from
   * before ids were scoped by org, the id's alone if that exec is the org's. Null: no such exec.
   */
  async locate(org_id: string, exec_id: string): Promise<string | null> {
    for (const key of [execKey(org_id, exec_id), legacyExecKey(exec_id)]) {
      const request = await this.request(key);
      if (request) return request.org_id === org_id ? key : null;
    }
    return null;
  }

  /** Checks the exec belongs to this org and VM (404 "exec not found" otherwise), then follows it. */
  async follow(org_id: string, vm_id: string, key: string, options: FollowExecOptions): Promise<AsyncIterable<ExecStreamItem>> {
    const request = await this.request(key);
    if (!request || request.org_id !== org_id || request.vm_id !== vm_id) throw notFound('exec');
    const stream = Exec.stream(key);
    const started = (await this.events.readStream(stream, { from_revision: 1, max_count: 1 })).length > 0;
    const after = options.after === 'latest' ? await this.lastCursor(stream) : options.after;
    return this.items(key, started, after, options);
  }

  private async request(key: string): Promise<ExecRequested['data'] | null> {
    const [first] = await this.events.readStream(Exec.stream(key), { max_count: 1 });
    return first?.type === 'ExecRequested' ? (first.data as ExecRequested['data']) : null;
  }

  /** The cursor of the exec's last line so far (0 before any). */
  private async lastCursor(stream: string): Promise<number> {
    const [last] = await this.events.readStream(stream, { direction: 'backwards', max_count: 1 });
    return (last?.data as { cursor?: number } | undefined)?.cursor ?? 0;
  }

  private async *items(key: string, started: boolean, after: number, options: FollowExecOptions): AsyncGenerator<ExecStreamItem> {
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
      // At the end, logs read right after must see every chunk: the read models are waited for up
      // to the event before the end (the end itself is in no read model), so the answer does not
      // wait for the projector to commit the end as well.
      for await (const event of tailExecStream(this.events, key, 0, tail.signal)) {
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
            await this.projection.waitFor(event.position - 1);
            yield* open();
            yield { kind: 'line', line: exitLine(options.shownExecId, event.data as ExecExited['data']) };
            return;
          case 'ExecLost':
            await this.projection.waitFor(event.position - 1);
            yield* open();
            yield { kind: 'line', line: errorLine(options.shownExecId, event.data as ExecLost['data'], 'exec_lost') };
            return;
          case 'ExecFailed': {
            await this.projection.waitFor(event.position - 1);
            const data = event.data as ExecFailed['data'];
            // Never started: the VM could not run it, answered before any output as an error.
            if (!opened) throw new HttpError(409, `exec could not run: ${data.reason}`);
            yield { kind: 'line', line: errorLine(options.shownExecId, data, 'exec_failed') };
            return;
          }
        }
      }
      if (timedOut) throw new WaitTimeoutError(`the worker to start exec ${key}`, this.config.waitTimeoutMs);
    } finally {
      clearTimeout(startTimer);
      options.signal.removeEventListener('abort', stopTail);
    }
  }
}
