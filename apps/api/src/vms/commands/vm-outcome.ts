import { awaitStreamEvent } from '@arbor/application';
import type { EventStore } from '@arbor/event-store';
import { streams } from '@arbor/domain';
import { HttpError } from '../../http/http-error';

/**
 * Waits for the worker's answer to an intent the API appended (the first outcome event caused by
 * it, or a failure), and turns a failure into a 500 that carries the worker's reason.
 */
export async function awaitVmOutcome(
  events: EventStore,
  vm_id: string,
  intentRevision: number,
  intentEventId: string,
  successType: string,
  timeoutMs: number,
): Promise<number> {
  const outcome = await awaitStreamEvent(
    events,
    streams.vm(vm_id),
    intentRevision,
    (event) => event.metadata.causation_id === intentEventId || event.type === 'VmDied' || event.type === 'VmDeleted',
    `the worker to finish ${successType} of vm ${vm_id}`,
    timeoutMs,
  );
  if (outcome.type === successType) return outcome.position;
  const reason = (outcome.data as { reason?: string }).reason ?? outcome.type;
  throw new HttpError(outcome.type === 'VmDeleted' ? 404 : 500, outcome.type === 'VmDeleted' ? 'vm not found' : reason);
}
