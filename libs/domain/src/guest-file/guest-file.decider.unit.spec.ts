import { deciderSpec } from '../testing/decider-spec';
import { FILE_CHUNK_BYTES, fromFileChunks, toFileChunks } from './file-chunks';
import { guestFileDecider } from './guest-file.decider';
import type { GuestFileEvent } from './guest-file.events';

const op_id = '22222222-2222-4222-8222-222222222222';
const vm_id = '11111111-1111-4111-8111-111111111111';
const spec = deciderSpec(guestFileDecider);

const chunk = (index: number, data_b64: string): GuestFileEvent => ({ type: 'FileContentChunk', data: { op_id, index, data_b64 } });
const write = { op_id, vm_id, org_id: 'org-1', path: '/etc/motd', mode: 0o600, create_dirs: false, size: 5, chunk_count: 1 };
const writeRequested: GuestFileEvent = { type: 'FileWriteRequested', data: write };
const read = { op_id, vm_id, org_id: 'org-1', path: '/etc/motd' };
const readRequested: GuestFileEvent = { type: 'FileReadRequested', data: read };
const hello = Buffer.from('hello').toString('base64');

describe('guest file decider', () => {
  describe('write', () => {
    it('takes the content first, then the request naming it', () => {
      spec.given([]).when({ type: 'AddFileChunk', op_id, index: 0, data_b64: hello }).then([chunk(0, hello)]);
      spec.given([chunk(0, hello)]).when({ type: 'RequestFileWrite', ...write }).then([writeRequested]);
    });

    it('refuses a request whose content has not all arrived', () => {
      spec.given([]).when({ type: 'RequestFileWrite', ...write }).thenThrows('invalid', 'file content incomplete: 0 of 1 chunks');
      spec.given([chunk(0, hello)]).when({ type: 'RequestFileWrite', ...write, size: 6 }).thenThrows('invalid', /incomplete/);
    });

    it('accepts an empty file without chunks', () =>
      spec.given([]).when({ type: 'RequestFileWrite', ...write, size: 0, chunk_count: 0 }).then([{ type: 'FileWriteRequested', data: { ...write, size: 0, chunk_count: 0 } }]));

    it('a retried upload appends nothing new, and a chunk out of order is refused', () => {
      spec.given([chunk(0, hello)]).when({ type: 'AddFileChunk', op_id, index: 0, data_b64: hello }).then([]);
      spec.given([chunk(0, hello), writeRequested]).when({ type: 'RequestFileWrite', ...write }).then([]);
      spec.given([]).when({ type: 'AddFileChunk', op_id, index: 1, data_b64: hello }).thenThrows('invalid', 'file chunk 1 arrived before chunk 0');
    });

    it('takes no content once the write is requested', () =>
      spec.given([chunk(0, hello), writeRequested]).when({ type: 'AddFileChunk', op_id, index: 1, data_b64: hello }).thenThrows('conflict', /no longer accepts content/));

    it('records the outcome once: a replayed report appends nothing', () => {
      const written: GuestFileEvent = { type: 'FileWritten', data: { op_id } };
      spec.given([chunk(0, hello), writeRequested]).when({ type: 'RecordFileWritten' }).then([written]);
      spec.given([chunk(0, hello), writeRequested, written]).when({ type: 'RecordFileWritten' }).then([]);
      spec.given([chunk(0, hello), writeRequested, written]).when({ type: 'RecordFileOperationFailed', kind: 'other', reason: 'x' }).then([]);
    });
  });

  describe('read', () => {
    it('is answered with the content after the request', () => {
      spec.given([]).when({ type: 'RequestFileRead', ...read }).then([readRequested]);
      spec.given([readRequested]).when({ type: 'AddFileChunk', op_id, index: 0, data_b64: hello }).then([chunk(0, hello)]);
      spec
        .given([readRequested, chunk(0, hello)])
        .when({ type: 'RecordFileRead', size: 5, chunk_count: 1 })
        .then([{ type: 'FileRead', data: { op_id, size: 5, chunk_count: 1 } }]);
    });

    it('notices a file that changed between a crashed read and its replay', () =>
      spec
        .given([readRequested, chunk(0, hello)])
        .when({ type: 'AddFileChunk', op_id, index: 0, data_b64: Buffer.from('howdy').toString('base64') })
        .thenThrows('conflict', /file content changed during the operation/));

    it('reports failures with their kind', () =>
      spec
        .given([readRequested])
        .when({ type: 'RecordFileOperationFailed', kind: 'not_found', reason: '/etc/motd: no such file' })
        .then([{ type: 'FileOperationFailed', data: { op_id, kind: 'not_found', reason: '/etc/motd: no such file' } }]));

    it('a write outcome does not answer a read, and an unknown operation has no outcome', () => {
      spec.given([readRequested]).when({ type: 'RecordFileWritten' }).thenThrows('invalid', /is a read, not a write/);
      spec.given([]).when({ type: 'RecordFileWritten' }).thenThrows('not_found', 'file operation not found');
    });

    it('one operation id is either a read or a write', () =>
      spec.given([chunk(0, hello), writeRequested]).when({ type: 'RequestFileRead', ...read }).thenThrows('conflict', 'file operation id already used'));
  });

  it('splits content into chunks of FILE_CHUNK_BYTES and joins them back', () => {
    const content = Buffer.alloc(FILE_CHUNK_BYTES * 2 + 3, 7);
    const chunks = toFileChunks(content);
    expect(chunks.map((c) => Buffer.from(c, 'base64').length)).toEqual([FILE_CHUNK_BYTES, FILE_CHUNK_BYTES, 3]);
    expect(fromFileChunks(chunks).equals(content)).toBe(true);
    expect(toFileChunks(Buffer.alloc(0))).toEqual([]);
  });
});
