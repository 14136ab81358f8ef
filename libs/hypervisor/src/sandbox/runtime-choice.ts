import { missingTools } from '../host/missing-tools';
import { hybridControllers, moveHybridControllersToV1 } from './hybrid-cgroups';
import type { OciRuntimeName } from './oci-runtime';

/** ARBOR_SANDBOX_RUNTIME: auto (crun where it runs, else runc), or one of them by name. */
export type OciRuntimeSetting = 'auto' | OciRuntimeName;

export interface OciRuntimePlan {
  name: OciRuntimeName;
  /** Why this one, for the log and the probe. */
  reason: string;
  /** Controllers to give v1 hierarchies of their own before crun can run (hybrid-cgroups.ts). */
  moveControllers: string[];
}

/**
 * Which runtime new machines run under, without changing anything on the host. auto prefers crun
 * (each call a few milliseconds where runc's take tens: create, branch and exec all wait on one),
 * falling back to runc, with the reason, where crun is not installed or the host's hybrid cgroup
 * layout cannot be made to suit it; a runtime asked for by name must work or the plan fails.
 */
export async function planOciRuntime(setting: OciRuntimeSetting): Promise<OciRuntimePlan> {
  const runc = async (why: string): Promise<OciRuntimePlan> => {
    if ((await missingTools(['runc'])).length > 0) throw new Error(`runc is not installed${setting === 'auto' ? ` (and ${why})` : ''}`);
    return { name: 'runc', reason: why, moveControllers: [] };
  };
  if (setting === 'runc') return runc('ARBOR_SANDBOX_RUNTIME=runc');
  const refuse = (why: string) => (setting === 'crun' ? Promise.reject(new Error(`ARBOR_SANDBOX_RUNTIME=crun, but ${why}`)) : runc(why));
  if ((await missingTools(['crun'])).length > 0) return refuse('crun is not installed');
  const hybrid = await hybridControllers();
  if (hybrid.blocked) return refuse(`crun cannot run on this host's hybrid cgroup layout: ${hybrid.blocked}`);
  const moved = hybrid.offered.length > 0 ? ` once ${hybrid.offered.join(', ')} get cgroup v1 hierarchies of their own (hybrid layout)` : '';
  return { name: 'crun', reason: `crun preferred${moved}`, moveControllers: hybrid.offered };
}

/**
 * Carries the plan out: moves the controllers it names (a host change, logged), and where that
 * fails, auto settles for runc with the reason, while crun asked for by name fails.
 */
export async function applyOciRuntimePlan(setting: OciRuntimeSetting, plan: OciRuntimePlan, log: (line: string) => void): Promise<OciRuntimePlan> {
  if (plan.moveControllers.length === 0) return plan;
  try {
    const moved = await moveHybridControllersToV1();
    if (moved.length > 0) log(`sandbox: gave ${moved.join(', ')} cgroup v1 hierarchies of their own, so that crun runs on this hybrid cgroup layout`);
    return { ...plan, moveControllers: [] };
  } catch (error) {
    const why = `crun cannot run on this host's hybrid cgroup layout: ${(error as Error).message}`;
    if (setting === 'crun') throw new Error(`ARBOR_SANDBOX_RUNTIME=crun, but ${why}`);
    return planOciRuntime('runc').then((runc) => ({ ...runc, reason: why }));
  }
}
