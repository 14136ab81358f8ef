import '../apps/vm-worker/src/uv-threadpool';
import 'reflect-metadata';
import { cpus, totalmem } from 'node:os';
import { benchApiLatency } from './api-latency.bench';
import { benchApiReads } from './api-reads.bench';
import { benchCommitAndBranch, benchParentsChain } from './commits.bench';
import { benchConcurrentMachines } from './concurrency.bench';
import { benchDriver } from './drivers.bench';
import { benchEdgeProxy, benchEdgeVms } from './edge.bench';
import { benchExec } from './exec.bench';
import { benchImageNewRoot } from './image-new-root.bench';
import { benchImageUpload, benchRegistryPull } from './images.bench';
import { benchInstrumentation } from './instrumentation.bench';
import { benchNetwork } from './network.bench';
import { benchEventStore } from './event-store.bench';
import { benchEventLog } from './event-log.bench';
import { benchProjectionLag } from './projection-lag.bench';
import { benchReadModels } from './read-models.bench';
import { benchRebuildRate } from './rebuild-rate.bench';
import { benchFork, benchRepositories } from './repositories.bench';

/** `npm run bench`: prints figures (no pass/fail). Record them in BENCHMARKS.md with the machine. */
async function main() {
  console.log(`machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}\n`);
  await benchEventStore();
  console.log('');
  await benchProjectionLag();
  console.log('');
  await benchEventLog();
  console.log('');
  await benchApiLatency();
  console.log('');
  await benchApiReads();
  console.log('');
  await benchInstrumentation();
  console.log('');
  await benchReadModels();
  console.log('');
  await benchRebuildRate();
  console.log('');
  await benchParentsChain();
  console.log('');
  await benchRepositories();
  console.log('');
  await benchImageUpload();
  console.log('');
  await benchRegistryPull();
  console.log('');
  await benchEdgeProxy();
  console.log('');
  await benchEdgeVms('sandbox');
  console.log('');
  await benchExec('sandbox', 100);
  console.log('');
  await benchConcurrentMachines('sandbox', 100);
  console.log('');
  // The same burst claiming warm machines: a pool absorbs a burst its size (ARBOR_SANDBOX_WARM_POOL).
  await benchConcurrentMachines('sandbox', 100, 100);
  console.log('');
  await benchCommitAndBranch('sandbox', 20);
  console.log('');
  await benchFork('sandbox', 20);
  console.log('');
  await benchCommitAndBranch('qemu', 5);
  console.log('');
  await benchNetwork(20);
  console.log('');
  await benchDriver('sandbox', 10);
  console.log('');
  await benchImageNewRoot('sandbox', 10);
  console.log('');
  await benchImageNewRoot('qemu', 3);
  console.log('');
  // TCG boots cost seconds of CPU each: few rounds (skipped, with the reason, where qemu cannot run).
  await benchDriver('qemu', 5);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
