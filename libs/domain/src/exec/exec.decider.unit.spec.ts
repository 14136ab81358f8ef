import { deciderSpec } from '../testing/decider-spec';
import { execDecider } from './exec.decider';
import type { ExecEvent } from './exec.events';

const exec_id = '22222222-2222-4222-8222-222222222222';
const vm_id = '11111111-1111-4111-8111-111111111111';
const now = '2026-11-23T10:00:00.000Z';
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
      .when({ type: 'RecordExecOutput', chunks: [{ stream: 'stdout', data: Buffer.from('a') }, { stream: 'stderr', data: Buffer.alloc(0) }, { stream: 'stderr', data: Buffer.from('b') }], now })
      .then([output(1, 'stdout', 'a'), output(2, 'stderr', 'b')]);
    spec
      .given([requested, started, output(1, 'stdout', 'a'), output(2, 'stderr', 'b')])
      .when({ type: 'RecordExecOutput', chunks: [{ stream: 'stdout', data: Buffer.from('c') }], now })
      .then([output(3, 'stdout', 'c')]);
  });

  it('takes no output before the start or after the end', () => {
    const chunks = [{ stream: 'stdout' as const, data: Buffer.from('x') }];
    spec.given([requested]).when({ type: 'RecordExecOutput', chunks, now }).then([]);
    spec.given([requested, started, output(1, 'stdout', 'a'), output(2, 'stdout', 'b'), exited]).when({ type: 'RecordExecOutput', chunks, now }).then([]);
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
});
