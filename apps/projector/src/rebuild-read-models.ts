import type { Infrastructure } from '@arbor/application';
import { Projector } from './projector';
import { ALL_PROJECTIONS } from './projections';

const PAGE = 1000;

/** Empties every read model and its checkpoint, then applies the whole log from the start. */
export async function rebuildReadModels(infra: Infrastructure, log: (line: string) => void = () => {}): Promise<number> {
  const projector = new Projector(infra.eventStore, infra.readModels, ALL_PROJECTIONS, log);
  await projector.reset();
  let after = -1;
  let applied = 0;
  for (;;) {
    const page = await infra.eventStore.readAll({ after_position: after, max_count: PAGE });
    for (const event of page) {
      await projector.apply(event);
      after = event.position;
      applied++;
    }
    if (page.length < PAGE) return applied;
  }
}
