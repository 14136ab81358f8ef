import { deterministicUuid, Vm, vmAddress, type ProjectRequested, type VmEvent } from '@arbor/domain';
import type { AggregateRepository, HandledCommand } from '../aggregate-repository';
import type { CommandContext } from '../command-context';

/** The ProjectRequested a deploy's steps answer: its event id and the request's correlation id. */
export interface ProjectIntent {
  event_id: string;
  correlation_id: string;
}

/**
 * The context of one step of a deploy, whoever takes it (the api, or the worker after a crash):
 * its command id fixed by the project and the step, so the api and the worker taking the same
 * step append it once; caused by ProjectRequested, correlated with the request, acted as the key
 * that asked (what the deploy makes is that key's user's: the role rule).
 */
export function projectStepContext(request: ProjectRequested['data'], intent: ProjectIntent, ...step: string[]): CommandContext {
  return {
    command_id: deterministicUuid(request.project_id, 'deploy', ...step),
    correlation_id: intent.correlation_id,
    causation_id: intent.event_id,
    actor_key_id: request.owner_id,
    org_id: request.org_id,
  };
}

/**
 * Asks for the project's VM as new_root does (the default image, the caller's env vars, its own
 * SSH key; its quota reserved by the api beforehand). The api asks right after ProjectRequested;
 * the worker asks again should the api have stopped in between: one command id, one VM.
 */
export function requestProjectVm(aggregates: AggregateRepository, request: ProjectRequested['data'], intent: ProjectIntent, env: Record<string, string>): Promise<HandledCommand<VmEvent>> {
  const { vm_id, org_id, owner_id, vm_config, vm_ssh_public_key, vm_ssh_key_generation } = request;
  return aggregates.handle(
    Vm,
    vm_id,
    {
      type: 'RequestVmCreation',
      vm_id,
      org_id,
      owner_id,
      config: vm_config,
      labels: null,
      env,
      ip: vmAddress(org_id, vm_id),
      parent_commit_id: null,
      grandparent_vm_id: null,
      ssh_public_key: vm_ssh_public_key,
      ssh_key_generation: vm_ssh_key_generation,
      now: new Date().toISOString(),
    },
    projectStepContext(request, intent, 'vm'),
  );
}
