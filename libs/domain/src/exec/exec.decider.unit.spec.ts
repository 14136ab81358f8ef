import { deciderSpec } from '../testing/decider-spec';
import { execDecider } from './exec.decider';
import type { ExecEvent } from './exec.events';
import { EXEC_OUTPUT_CHUNK_MAX_BYTES, execOutputLimitNote } from './exec-key';

const exec_id = '22222222-2222-4222-8222-222222222222';
const vm_id = '11111111-1111-4111-8111-111111111111';
const now = '2026-11-23T10:00:00.000Z';
const limit_bytes = 1 << 20;
const spec = deciderSpec(execDecider);

const request = {
  type: 'RequestExec' as const,
  exec_id,
  vm_id,
  org_id: 'org-1',
  command: ['echo', 'hi'],
  env: { A: '1' },
  working_dir: '/tmp',
  stdin: null,
  timeout_secs: 0,
  now,
};
const requested: ExecEvent = {
  type: 'ExecRequested',
  data: { exec_id, vm_id, org_id: 'org-1', command: ['echo', 'hi'], env: { A: '1' }, working_dir: '/tmp', stdin: null, timeout_secs: 0, requested_at: now },
};
const started: ExecEvent = { type: 'ExecStarted', data: { exec_id, vm_id, started_at: now } };
const output = (cursor: number, stream: 'stdout' | 'stderr', text: string): ExecEvent => ({
  type: 'ExecOutput',
  data: { exec_id, vm_id, cursor, stream, data_b64: Buffer.from(text).toString('base64'), at: now },
});
const exited: ExecEvent = { type: 'ExecExited', data: { exec_id, vm_id, cursor: 3, exit_code: 0, at: now } };

describe('exec decider', () => {
  it('requests an exec once; reusing its id is a conflict', () => {
    spec.given([]).when(request).then([requested]);
    spec.given([requested]).when(request).thenThrows('conflict', `exec ${exec_id} already exists`);
  });

  it('refuses an empty command: there is nothing to run', () =>
    spec.given([]).when({ ...request, command: [] }).thenThrows('invalid', /command must name a program/));

  it('records the start only once, and only for a requested exec', () => {
    spec.given([requested]).when({ type: 'RecordExecStarted', now }).then([started]);
    spec.given([requested, started]).when({ type: 'RecordExecStarted', now }).then([]);
    spec.given([]).when({ type: 'RecordExecStarted', now }).then([]);
  });

  it('numbers output batches with cursors that continue from the last one, skipping empty chunks', () => {
    spec
      .given([requested, started])
      .when({ type: 'RecordExecOutput', chunks: [{ stream: 'stdout', data: Buffer.from('a') }, { stream: 'stderr', data: Buffer.alloc(0) }, { stream: 'stderr', data: Buffer.from('b') }], limit_bytes, now })
      .then([output(1, 'stdout', 'a'), output(2, 'stderr', 'b')]);
    spec
      .given([requested, started, output(1, 'stdout', 'a'), output(2, 'stderr', 'b')])
      .when({ type: 'RecordExecOutput', chunks: [{ stream: 'stdout', data: Buffer.from('c') }], limit_bytes, now })
      .then([output(3, 'stdout', 'c')]);
  });

  it('takes no output before the start or after the end', () => {
    const chunks = [{ stream: 'stdout' as const, data: Buffer.from('x') }];
    spec.given([requested]).when({ type: 'RecordExecOutput', chunks, limit_bytes, now }).then([]);
    spec.given([requested, started, output(1, 'stdout', 'a'), output(2, 'stdout', 'b'), exited]).when({ type: 'RecordExecOutput', chunks, limit_bytes, now }).then([]);
  });

  it('the exit carries the next cursor; a finished exec records nothing more', () => {
    spec.given([requested, started, output(1, 'stdout', 'a'), output(2, 'stdout', 'b')]).when({ type: 'RecordExecExited', exit_code: 0, now }).then([exited]);
    const finished = [requested, started, output(1, 'stdout', 'a'), output(2, 'stdout', 'b'), exited];
    spec.given(finished).when({ type: 'RecordExecExited', exit_code: 1, now }).then([]);
    spec.given(finished).when({ type: 'RecordExecFailed', reason: 'late', now }).then([]);
  });

  it('fails a requested or started exec with the reason', () => {
    const failed = (cursor: number): ExecEvent => ({ type: 'ExecFailed', data: { exec_id, vm_id, cursor, reason: 'vm is dead', at: now } });
    spec.given([requested]).when({ type: 'RecordExecFailed', reason: 'vm is dead', now }).then([failed(1)]);
    spec.given([requested, started, output(1, 'stdout', 'a')]).when({ type: 'RecordExecFailed', reason: 'vm is dead', now }).then([failed(2)]);
    spec.given([requested, started, output(1, 'stdout', 'a'), failed(2)]).when({ type: 'RecordExecExited', exit_code: 0, now }).then([]);
  });

  it('splits output into events of at most 64 KiB', () => {
    const big = Buffer.alloc(EXEC_OUTPUT_CHUNK_MAX_BYTES * 2 + 10, 'x');
    const events = execDecider.decide({ type: 'RecordExecOutput', chunks: [{ stream: 'stdout', data: big }], limit_bytes, now }, [requested, started].reduce(execDecider.evolve, execDecider.initialState()));
    expect(events.map((e) => (e.type === 'ExecOutput' ? Buffer.from(e.data.data_b64, 'base64').length : 0))).toEqual([EXEC_OUTPUT_CHUNK_MAX_BYTES, EXEC_OUTPUT_CHUNK_MAX_BYTES, 10]);
    expect(events.map((e) => (e as { data: { cursor: number } }).data.cursor)).toEqual([1, 2, 3]);
  });

  it('past the output limit keeps what fits, says so on stderr, records nothing more, and exits 137', () => {
    const limited: ExecEvent = { type: 'ExecOutputLimitReached', data: { exec_id, vm_id, limit_bytes: 5, at: now } };
    const note = (cursor: number) => output(cursor, 'stderr', execOutputLimitNote(5));
    spec
      .given([requested, started, output(1, 'stdout', 'abc')])
      .when({ type: 'RecordExecOutput', chunks: [{ stream: 'stderr', data: Buffer.from('de') }, { stream: 'stdout', data: Buffer.from('fgh') }], limit_bytes: 5, now })
      .then([output(2, 'stderr', 'de'), limited, note(3)]);
    spec
      .given([requested, started, output(1, 'stdout', 'abc')])
      .when({ type: 'RecordExecOutput', chunks: [{ stream: 'stdout', data: Buffer.from('defgh') }], limit_bytes: 5, now })
      .then([output(2, 'stdout', 'de'), limited, note(3)]);
    const stopped = [requested, started, output(1, 'stdout', 'abcde'), limited, note(2)];
    spec.given(stopped).when({ type: 'RecordExecOutput', chunks: [{ stream: 'stdout', data: Buffer.from('more') }], limit_bytes: 5, now }).then([]);
    spec.given(stopped).when({ type: 'RecordExecExited', exit_code: 0, now }).then([{ type: 'ExecExited', data: { exec_id, vm_id, cursor: 3, exit_code: 137, at: now } }]);
    // Exactly the limit is not past it.
    spec.given([requested, started]).when({ type: 'RecordExecOutput', chunks: [{ stream: 'stdout', data: Buffer.from('abcde') }], limit_bytes: 5, now }).then([output(1, 'stdout', 'abcde')]);
  });

  it('an exec found started but not running is lost (not run again), only once', () => {
    const lost: ExecEvent = { type: 'ExecLost', data: { exec_id, vm_id, cursor: 2, reason: 'restarted', at: now } };
    spec.given([requested, started, output(1, 'stdout', 'a')]).when({ type: 'RecordExecLost', reason: 'restarted', now }).then([lost]);
    spec.given([requested, started, output(1, 'stdout', 'a'), lost]).when({ type: 'RecordExecLost', reason: 'restarted', now }).then([]);
    spec.given([requested, started, output(1, 'stdout', 'a'), lost]).when({ type: 'RecordExecExited', exit_code: 0, now }).then([]);
    spec.given([requested]).when({ type: 'RecordExecLost', reason: 'restarted', now }).then([]);
  });
});
