import { spawn } from 'node:child_process';
import type { ExecChunk, HypervisorDriver } from '@arbor/hypervisor';
import { EXTRACT_SCRIPT } from './deploy-guest-scripts';

/** Each part of the tree's tar written into the VM: what the worker holds in memory at once. */
const PART_BYTES = 8 * 1024 * 1024;
/** What a failing unpack may say (its last words). */
const SAID_MAX = 4096;

/**
 * Copies a directory of the host into the VM at `dest` through the driver, so the VM needs no
 * network: `tar` streams the tree (owned by root, modes and links kept, nothing followed out of
 * it) and its output goes into the VM in parts of 8 MiB (`writeFile`), read only as fast as the
 * VM takes them; one exec in the VM unpacks them and checks the working directory is there.
 */
export async function copyTreeIntoVm(driver: HypervisorDriver, vm_id: string, hostDir: string, stage: string, dest: string, workdir: string): Promise<void> {
  const tar = spawn('tar', ['-C', hostDir, '--numeric-owner', '--owner=0', '--group=0', '-cf', '-', '.'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let said = '';
  tar.stderr.on('data', (chunk: Buffer) => (said = (said + chunk.toString()).slice(-SAID_MAX)));
  const exited = new Promise<number | null>((resolve, reject) => {
    tar.on('error', reject);
    tar.on('close', resolve);
  });
  let part = 0;
  let held: Buffer[] = [];
  let heldBytes = 0;
  const write = async (content: Buffer) => driver.writeFile(vm_id, `${stage}/part-${String(part++).padStart(6, '0')}`, content, { mode: 0o600, create_dirs: true });
  try {
    // Iterating pauses the stream while a part is written: backpressure down to tar.
    for await (const chunk of tar.stdout as AsyncIterable<Buffer>) {
      held.push(chunk);
      heldBytes += chunk.length;
      while (heldBytes >= PART_BYTES) {
        const all = Buffer.concat(held);
        await write(all.subarray(0, PART_BYTES));
        held = [all.subarray(PART_BYTES)];
        heldBytes = held[0].length;
      }
    }
    if (heldBytes > 0 || part === 0) await write(Buffer.concat(held));
  } catch (error) {
    tar.kill('SIGKILL');
    throw error;
  }
  const code = await exited;
  if (code !== 0) throw new Error(`packing the repository failed: ${said.trim() || `tar exited with ${code}`}`);

  // What the guest says is bounded like anything out of a VM.
  const output: Buffer[] = [];
  let outputBytes = 0;
  const onChunk = (chunk: ExecChunk) => {
    if (outputBytes < SAID_MAX) output.push(chunk.data.subarray(0, SAID_MAX - outputBytes));
    outputBytes += chunk.data.length;
  };
  const { exit_code } = await driver.exec(vm_id, { argv: ['/bin/sh', '-c', EXTRACT_SCRIPT, 'arbor-deploy', stage, dest, workdir], timeout_secs: 600 }, onChunk);
  if (exit_code !== 0) {
    const text = Buffer.concat(output).toString('utf8').trim().slice(-SAID_MAX);
    throw new Error(exit_code === 3 ? text : `unpacking the repository in the VM failed (exit code ${exit_code}): ${text}`);
  }
}
