import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { eventually } from '@arbor/hypervisor/testing';
import { createPauseResumeDelete, type ProcessTrio, startProcessTrio, stopProcess } from '../support/processes';
import { DEFAULT_BRIDGE, leaseOf, networkTracesOf } from '../support/vm-network';

/**
 * The distributed shape on one machine: api, projector and vm-worker as three processes (the
 * entry points docker compose runs) sharing only the stores — here the embedded SQLite files,
 * which several processes may open at once.
 */
describe('api, projector and vm-worker as separate processes', () => {
  let trio: ProcessTrio;

  beforeAll(async () => {
    trio = await startProcessTrio({ env: {}, dataDirs: 'shared' });
  }, 320_000);

  afterAll(async () => {
    await trio?.stop();
  });

  it('creates, pauses, resumes and deletes a real machine through three cooperating processes', async () => {
    await createPauseResumeDelete(trio, { via: 'processes' }, {
      created: async (vmId) => expect((await trio.call('GET', `/api/v1/vm/${vmId}/status`)).json).toMatchObject({ state: 'running', labels: { via: 'processes' } }),
    });
  }, 120_000);

  /**
   * Stopping the worker, gracefully or not, leaves machines running; the next worker adopts them
   * (the very same init process), drives them, and DELETE still leaves nothing on the host.
   */
  it.each(['SIGTERM', 'SIGKILL'] as const)('the worker adopts the running machine after a restart by %s, and DELETE leaves no trace', async (signal) => {
    const { call, driver } = trio;
    const vmId: string = (await call('POST', '/api/v1/vm/new_root?wait_boot=true', { vm_config: {} })).json.vm_id;
    const initPid = async () => (await driver.list()).find((machine) => machine.vm_id === vmId)?.pid;
    const pid = await initPid();
    expect(pid).toEqual(expect.any(Number));
    expect(readFileSync('/proc/self/mounts', 'utf8')).toContain(vmId); // its disk, while it exists
    const lease = leaseOf(vmId);
    const network = networkView(lease);
    expect(network).toEqual({ bridge: DEFAULT_BRIDGE, rulesNamingIt: expect.any(Number) });

    await stopProcess(trio.worker, signal);
    expect(await driver.status(vmId)).toBe('running');
    await trio.startWorker();

    expect(await initPid()).toBe(pid);
    // Its network adopted as it was: the same addresses and port, no rule twice, nothing swept.
    expect(leaseOf(vmId)).toEqual(lease);
    expect(networkView(lease)).toEqual(network);
    expect((await call('GET', `/api/v1/vm/${vmId}/metadata`)).json.ip).toBe(lease.ipv6);
    const exec = await call('POST', `/api/v1/vm/${vmId}/exec`, { command: ['sh', '-c', 'echo still here'] });
    expect(exec.status).toBe(200);
    expect(exec.json).toMatchObject({ exit_code: 0, stdout: 'still here\n' });
    expect((await call('PATCH', `/api/v1/vm/${vmId}/state`, { state: 'Paused' })).status).toBe(200);
    expect(await driver.status(vmId)).toBe('paused');

    expect((await call('DELETE', `/api/v1/vm/${vmId}`)).status).toBe(200);
    expect(await driver.status(vmId)).toBeNull();
    expect(processExists(pid!)).toBe(false);
    // The driver hands a deleted machine's directory to its reaper, which unmounts behind the answer.
    expect(await eventually(async () => mountsNaming(vmId), (mounts) => mounts.length === 0)).toEqual([]);
    expect(networkTracesOf(lease)).toEqual([]);
  }, 120_000);
});

/** Whether any process has this pid (signal 0 checks without sending anything). */
function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/** The host's mounts that name `vmId`. */
function mountsNaming(vmId: string): string[] {
  return readFileSync('/proc/self/mounts', 'utf8').split('\n').filter((line) => line.includes(vmId));
}

/** Which bridge the machine's port is on, and how many times the ruleset names its address. */
function networkView(lease: { ifname: string; ipv6: string }): { bridge: string; rulesNamingIt: number } {
  const bridge = execFileSync('sh', ['-c', `basename "$(readlink /sys/class/net/${lease.ifname}/master)"`], { encoding: 'utf8' }).trim();
  const rulesNamingIt = execFileSync('nft', ['list', 'ruleset'], { encoding: 'utf8' }).split(lease.ipv6).length - 1;
  return { bridge, rulesNamingIt };
}
