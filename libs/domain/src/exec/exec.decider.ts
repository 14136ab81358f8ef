import type { Decider } from '../shared/decider';
import { conflict, invalid } from '../shared/domain-error';
import type { ExecCommand } from './exec.commands';
import type { ExecEvent, ExecRequested } from './exec.events';

/** requested: waiting for the worker; started: handed to the machine; exited/failed: finished. */
export type ExecStatus = 'none' | 'requested' | 'started' | 'exited' | 'failed';

export interface ExecState {
  status: ExecStatus;
  request: ExecRequested['data'] | null;
  /** Cursor of the last output, exit or failure event (0 before any). */
  last_cursor: number;
}

const initialState = (): ExecState => ({ status: 'none', request: null, last_cursor: 0 });

export const isExecFinished = (state: ExecState): boolean => state.status === 'exited' || state.status === 'failed';

function decide(command: ExecCommand, state: ExecState): ExecEvent[] {
  switch (command.type) {
    case 'RequestExec': {
      if (state.status !== 'none') throw conflict(`exec ${command.exec_id} already exists`);
      if (command.command.length === 0) throw invalid('command must name a program to run (it is empty)');
      const { exec_id, vm_id, org_id, env, working_dir, stdin, timeout_secs, now } = command;
      return [{ type: 'ExecRequested', data: { exec_id, vm_id, org_id, command: command.command, env, working_dir, stdin, timeout_secs, requested_at: now } }];
    }
    case 'RecordExecStarted':
      if (state.status !== 'requested') return [];
      return [{ type: 'ExecStarted', data: { exec_id: state.request!.exec_id, vm_id: state.request!.vm_id, started_at: command.now } }];
    case 'RecordExecOutput': {
      if (state.status !== 'started') return [];
      const { exec_id, vm_id } = state.request!;
      return command.chunks
        .filter((chunk) => chunk.data.length > 0)
        .map((chunk, index) => ({
          type: 'ExecOutput',
          data: { exec_id, vm_id, cursor: state.last_cursor + index + 1, stream: chunk.stream, data_b64: chunk.data.toString('base64'), at: command.now },
        }));
    }
    case 'RecordExecExited':
      if (state.status !== 'started') return [];
      return [{ type: 'ExecExited', data: { exec_id: state.request!.exec_id, vm_id: state.request!.vm_id, cursor: state.last_cursor + 1, exit_code: command.exit_code, at: command.now } }];
    case 'RecordExecFailed':
      if (state.status !== 'requested' && state.status !== 'started') return [];
      return [{ type: 'ExecFailed', data: { exec_id: state.request!.exec_id, vm_id: state.request!.vm_id, cursor: state.last_cursor + 1, reason: command.reason, at: command.now } }];
  }
}

function evolve(state: ExecState, event: ExecEvent): ExecState {
  switch (event.type) {
    case 'ExecRequested':
      return { ...state, status: 'requested', request: event.data };
    case 'ExecStarted':
      return { ...state, status: 'started' };
    case 'ExecOutput':
      return { ...state, last_cursor: event.data.cursor };
    case 'ExecExited':
      return { ...state, status: 'exited', last_cursor: event.data.cursor };
    case 'ExecFailed':
      return { ...state, status: 'failed', last_cursor: event.data.cursor };
  }
}

export const execDecider: Decider<ExecCommand, ExecState, ExecEvent> = { initialState, decide, evolve };
