import type { Decider } from '../shared/decider';
import { conflict, invalid } from '../shared/domain-error';
import type { ExecCommand } from './exec.commands';
import type { ExecEvent, ExecOutputStream, ExecRequested } from './exec.events';
import { EXEC_OUTPUT_CHUNK_MAX_BYTES, EXEC_OUTPUT_LIMIT_EXIT_CODE, execOutputLimitNote } from './exec-key';

/** requested: waiting for the worker; started: handed to the machine; exited/failed/lost: finished. */
export type ExecStatus = 'none' | 'requested' | 'started' | 'exited' | 'failed' | 'lost';

export interface ExecState {
  status: ExecStatus;
  request: ExecRequested['data'] | null;
  /** Cursor of the last output, exit or failure event (0 before any). */
  last_cursor: number;
  /** Output bytes recorded (the limit note aside). */
  output_bytes: number;
  /** The output passed the limit: nothing more is recorded, the command is being stopped. */
  output_limited: boolean;
}

const initialState = (): ExecState => ({ status: 'none', request: null, last_cursor: 0, output_bytes: 0, output_limited: false });

export const isExecFinished = (state: ExecState): boolean => state.status === 'exited' || state.status === 'failed' || state.status === 'lost';

/** Chunks as output events take them: none empty, none larger than EXEC_OUTPUT_CHUNK_MAX_BYTES. */
function* outputPieces(chunks: { stream: ExecOutputStream; data: Buffer }[]): Generator<{ stream: ExecOutputStream; data: Buffer }> {
  for (const chunk of chunks) {
    for (let offset = 0; offset < chunk.data.length; offset += EXEC_OUTPUT_CHUNK_MAX_BYTES) {
      yield { stream: chunk.stream, data: chunk.data.subarray(offset, offset + EXEC_OUTPUT_CHUNK_MAX_BYTES) };
    }
  }
}

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
      if (state.status !== 'started' || state.output_limited) return [];
      const { exec_id, vm_id } = state.request!;
      const events: ExecEvent[] = [];
      const output = (stream: ExecOutputStream, data: Buffer) =>
        events.push({ type: 'ExecOutput', data: { exec_id, vm_id, cursor: state.last_cursor + events.length + 1, stream, data_b64: data.toString('base64'), at: command.now } });
      let room = command.limit_bytes - state.output_bytes;
      for (const piece of outputPieces(command.chunks)) {
        if (piece.data.length > room) {
          // Past the limit: what fits is kept, the rest dropped, and the exec says so (see ExecOutputLimitReached).
          if (room > 0) output(piece.stream, piece.data.subarray(0, room));
          const limited: ExecEvent = { type: 'ExecOutputLimitReached', data: { exec_id, vm_id, limit_bytes: command.limit_bytes, at: command.now } };
          output('stderr', Buffer.from(execOutputLimitNote(command.limit_bytes)));
          return [...events.slice(0, -1), limited, events[events.length - 1]];
        }
        output(piece.stream, piece.data);
        room -= piece.data.length;
      }
      return events;
    }
    case 'RecordExecExited': {
      if (state.status !== 'started') return [];
      const exit_code = state.output_limited ? EXEC_OUTPUT_LIMIT_EXIT_CODE : command.exit_code;
      return [{ type: 'ExecExited', data: { exec_id: state.request!.exec_id, vm_id: state.request!.vm_id, cursor: state.last_cursor + 1, exit_code, at: command.now } }];
    }
    case 'RecordExecFailed':
      if (state.status !== 'requested' && state.status !== 'started') return [];
      return [{ type: 'ExecFailed', data: { exec_id: state.request!.exec_id, vm_id: state.request!.vm_id, cursor: state.last_cursor + 1, reason: command.reason, at: command.now } }];
    case 'RecordExecLost':
      if (state.status !== 'started') return [];
      return [{ type: 'ExecLost', data: { exec_id: state.request!.exec_id, vm_id: state.request!.vm_id, cursor: state.last_cursor + 1, reason: command.reason, at: command.now } }];
  }
}

function evolve(state: ExecState, event: ExecEvent): ExecState {
  switch (event.type) {
    case 'ExecRequested':
      return { ...state, status: 'requested', request: event.data };
    case 'ExecStarted':
      return { ...state, status: 'started' };
    case 'ExecOutput': {
      // The limit note is the exec's own word, not the command's output.
      const bytes = state.output_limited ? 0 : Buffer.byteLength(event.data.data_b64, 'base64');
      return { ...state, last_cursor: event.data.cursor, output_bytes: state.output_bytes + bytes };
    }
    case 'ExecOutputLimitReached':
      return { ...state, output_limited: true };
    case 'ExecExited':
      return { ...state, status: 'exited', last_cursor: event.data.cursor };
    case 'ExecFailed':
      return { ...state, status: 'failed', last_cursor: event.data.cursor };
    case 'ExecLost':
      return { ...state, status: 'lost', last_cursor: event.data.cursor };
  }
}

export const execDecider: Decider<ExecCommand, ExecState, ExecEvent> = { initialState, decide, evolve };
