import { randomUUID } from 'node:crypto';
import { newCommandContext } from '@arbor/application';
import { FILE_CHUNK_BYTES, fromFileChunks, GuestFile, toFileChunks, type GuestFileCommand } from '@arbor/domain';
import { InMemoryDriver, type WriteFileOptions } from '@arbor/hypervisor';
import { WorkerTestBed } from './testing/worker-test-bed';

/** The in-memory driver, with its file calls recorded too. */
class FileCountingDriver extends InMemoryDriver {
  readonly fileCalls: string[] = [];
  override async readFile(vm_id: string, path: string): Promise<Buffer> {
    this.fileCalls.push(`read ${path}`);
    return super.readFile(vm_id, path);
  }
  override async writeFile(vm_id: string, path: string, content: Buffer, options?: WriteFileOptions): Promise<void> {
    this.fileCalls.push(`write ${path} ${options?.mode?.toString(8)}`);
    return super.writeFile(vm_id, path, content, options);
  }
}

/** Guest file requests in the log are carried out once on the driver, and a replay does nothing. */
describe('vm-worker: guest files', () => {
  let bed: WorkerTestBed;
  let driver: FileCountingDriver;
  let vm_id: string;
  const context = newCommandContext({ org_id: 'org-1', actor_key_id: 'key-1' });

  beforeEach(async () => {
    vm_id = randomUUID();
    bed = new WorkerTestBed();
    driver = new FileCountingDriver();
    // A running VM, as the log and the host both know it.
    await bed.requestVm(vm_id);
    await bed.start(driver);
    await bed.settle();
    expect(await driver.status(vm_id)).toBe('running');
  });
  afterEach(() => bed.destroy());

  /** A new worker without a checkpoint: it replays the whole log. */
  const startFreshWorker = async () => {
    await bed.stop();
    bed.forgetCheckpoint();
    await bed.start(driver);
  };
  const submit = (op_id: string, command: GuestFileCommand, part: string) =>
    bed.guestFile(op_id, command, { ...context, command_id: `${context.command_id}-${part}` });
  const requestWrite = async (op_id: string, path: string, content: Buffer) => {
    const chunks = toFileChunks(content);
    for (const [index, data_b64] of chunks.entries()) await submit(op_id, { type: 'AddFileChunk', op_id, index, data_b64 }, `chunk-${index}`);
    await submit(op_id, { type: 'RequestFileWrite', op_id, vm_id, org_id: 'org-1', path, mode: 0o600, create_dirs: false, size: content.length, chunk_count: chunks.length }, 'request');
  };
  const requestRead = (op_id: string, path: string) => submit(op_id, { type: 'RequestFileRead', op_id, vm_id, org_id: 'org-1', path }, 'request');

  it('writes once, answers with FileWritten caused by the request, and does nothing on a full replay', async () => {
    const op = randomUUID();
    await requestWrite(op, '/etc/motd', Buffer.from('hello'));
    await bed.settle();
    expect(driver.fileCalls).toEqual(['write /etc/motd 600']);
    const events = await bed.store.readStream(GuestFile.stream(op));
    expect(events.map((e) => e.type)).toEqual(['FileContentChunk', 'FileWriteRequested', 'FileWritten']);
    expect(events[2].metadata.causation_id).toBe(events[1].id);
    expect(events[2].metadata.correlation_id).toBe(context.correlation_id);
    expect(events[2].metadata.org_id).toBe('org-1');

    // A new worker without a checkpoint replays the whole log: the finished write is left alone.
    await startFreshWorker();
    await bed.settle();
    expect(driver.fileCalls).toEqual(['write /etc/motd 600']);
    expect(await bed.types(GuestFile.stream(op))).toEqual(['FileContentChunk', 'FileWriteRequested', 'FileWritten']);
    expect((await driver.readFile(vm_id, '/etc/motd')).toString()).toBe('hello');
  });

  it('answers a read with the content in chunks of at most FILE_CHUNK_BYTES, then FileRead; a replay reads nothing', async () => {
    const content = Buffer.from(Uint8Array.from({ length: FILE_CHUNK_BYTES * 2 + 10 }, (_, i) => i % 251));
    await driver.writeFile(vm_id, '/data.bin', content);
    driver.fileCalls.length = 0;
    const op = randomUUID();
    await requestRead(op, '/data.bin');
    await bed.settle();
    expect(await bed.types(GuestFile.stream(op))).toEqual(['FileReadRequested', 'FileContentChunk', 'FileContentChunk', 'FileContentChunk', 'FileRead']);
    const { state } = await bed.aggregates.load(GuestFile, op);
    expect(fromFileChunks(state.chunks).equals(content)).toBe(true);
    expect(state.outcome).toEqual({ type: 'read', size: content.length });

    await startFreshWorker();
    await bed.settle();
    expect(driver.fileCalls).toEqual(['read /data.bin']);
    expect(await bed.types(GuestFile.stream(op))).toHaveLength(5);
  });

  it('finishes a read the worker crashed in the middle of, without repeating the chunks it had appended', async () => {
    const content = Buffer.alloc(FILE_CHUNK_BYTES + 1, 3);
    await driver.writeFile(vm_id, '/half.bin', content);
    const op = randomUUID();
    await bed.stop();
    await requestRead(op, '/half.bin');
    // The crashed worker's first chunk is already in the log.
    await bed.guestFile(op, { type: 'AddFileChunk', op_id: op, index: 0, data_b64: toFileChunks(content)[0] }, { ...context, command_id: randomUUID() });
    await bed.start(driver);
    await bed.settle();
    expect(await bed.types(GuestFile.stream(op))).toEqual(['FileReadRequested', 'FileContentChunk', 'FileContentChunk', 'FileRead']);
  });

  it('reports why an operation failed: missing file, paused machine, vanished machine', async () => {
    const [missing, paused, gone] = [randomUUID(), randomUUID(), randomUUID()];
    await requestRead(missing, '/nope');
    await bed.settle();
    await driver.pause(vm_id);
    await requestWrite(paused, '/x', Buffer.from('x'));
    await bed.settle();
    driver.lose(vm_id);
    await requestRead(gone, '/x');
    await bed.settle();
    const outcome = async (op: string) => (await bed.aggregates.load(GuestFile, op)).state.outcome;
    expect(await outcome(missing)).toMatchObject({ type: 'failed', kind: 'not_found' });
    expect(await outcome(paused)).toMatchObject({ type: 'failed', kind: 'vm_unavailable' });
    expect(await outcome(gone)).toMatchObject({ type: 'failed', kind: 'vm_unavailable' });
  });
});
