import Ajv, { type ValidateFunction } from 'ajv';
import { upcast } from '@arbor/application';
import { EVENT_CATALOGUE } from '@arbor/domain';
import type { EventStore, RecordedEvent } from '@arbor/event-store';

/** One event that does not match the catalogue: its type, where it is, and why. */
export interface CatalogueMismatch {
  type: string;
  position?: number;
  errors: unknown;
}

/** Validators by type, compiled as first met (a suite's log holds a few dozen of the types). */
const ajv = new Ajv({ allErrors: true, strict: false });
const validators = new Map<string, ValidateFunction | undefined>();
function validatorOf(type: string): ValidateFunction | undefined {
  if (!validators.has(type)) validators.set(type, EVENT_CATALOGUE[type] ? ajv.compile(EVENT_CATALOGUE[type].schema) : undefined);
  return validators.get(type);
}

type Checked = Pick<RecordedEvent, 'type' | 'data'> & { metadata: { schema_version?: number }; position?: number };

/**
 * The events whose type the catalogue lacks, whose data does not validate against the type's
 * schema, or whose schema version is not the catalogue's. `upcast`: events as stored are brought
 * up to the current version first, as every reader of the log does (an old event is checked
 * against the schema it is read as).
 */
export function catalogueMismatches(events: Checked[], options: { upcast: boolean }): CatalogueMismatch[] {
  return events.flatMap((stored): CatalogueMismatch[] => {
    const event = options.upcast ? (upcast(stored as RecordedEvent) as Checked) : stored;
    const validate = validatorOf(event.type);
    const where = event.position === undefined ? {} : { position: event.position };
    if (!validate) return [{ type: event.type, ...where, errors: 'not in the catalogue' }];
    if (!validate(event.data)) return [{ type: event.type, ...where, errors: validate.errors }];
    const version = EVENT_CATALOGUE[event.type].schema_version;
    if (event.metadata.schema_version !== version) return [{ type: event.type, ...where, errors: `schema_version ${event.metadata.schema_version}, the catalogue's is ${version}` }];
    return [];
  });
}

/** The whole log of a store checked against the catalogue, a page at a time, every event upcast as it is read. */
export async function logMismatches(store: EventStore): Promise<CatalogueMismatch[]> {
  const mismatches: CatalogueMismatch[] = [];
  for (let after = -1; ; ) {
    const page = await store.readAll({ after_position: after, max_count: 5000 });
    if (page.length === 0) return mismatches;
    mismatches.push(...catalogueMismatches(page, { upcast: true }));
    after = page[page.length - 1].position;
  }
}
