import { sealedFieldsOf, writtenSealed, type SealedField } from '@arbor/domain';
import type { NewEvent, RecordedEvent } from '@arbor/event-store';
import { upcast } from '../event-envelope';
import { OpenedValues } from './opened-values';
import type { DataKey, OrgKeys } from './org-keys';
import { isSealed, openValue, parseSealedValue, sealValue } from './sealed-value';

type Data = Record<string, unknown>;

/**
 * Seals the fields the catalogue marks `@sealed` as events are appended, and opens them as they
 * are read back for the domain (the aggregate repository does both), with the org's data keys
 * (OrgKeys): the log, and every copy of it (feed, export, webhooks, backups), holds those values
 * only sealed. A value whose key was shredded stays sealed when read (see isSealed). Events written
 * before their type was sealed (SEALED_SINCE) hold their values in clear and are read as they are.
 */
export class EventSecrets {
  private readonly opened = new OpenedValues();

  constructor(private readonly keys: OrgKeys | null) {}

  /** For processes and tests that have no secrets to keep: sealing one fails loudly, nothing is opened. */
  static readonly NONE = new EventSecrets(null);

  async seal(events: NewEvent[]): Promise<NewEvent[]> {
    return Promise.all(events.map((event) => this.sealEvent(event)));
  }

  /** Upcast to their current version, with their sealed values opened where their key still exists. */
  async open(recorded: RecordedEvent[]): Promise<RecordedEvent[]> {
    const keys = new Map<string, Promise<Buffer | null>>(); // each key read once per call
    const keyOf = (key_id: string) => keys.get(key_id) ?? keys.set(key_id, this.keys?.key(key_id) ?? Promise.resolve(null)).get(key_id)!;
    return Promise.all(recorded.map((event) => this.openEvent(event, keyOf)));
  }

  private async sealEvent(event: NewEvent): Promise<NewEvent> {
    const fields = sealedFieldsOf(event.type).filter(({ field, kind }) => holdsSecret((event.data as Data)[field], kind));
    if (!fields.length) return event;
    const where = `${event.type} (${fields.map((f) => f.field).join(', ')})`;
    if (!writtenSealed(event.type, event.metadata.schema_version ?? 1)) throw new Error(`${where} is written at a version that is not sealed`);
    if (!event.metadata.org_id) throw new Error(`${where} holds secrets but belongs to no org, whose key would seal them`);
    if (!this.keys) throw new Error(`${where} holds secrets, and this process has no key store to seal them with`);
    const key = await this.keys.sealingKey(event.metadata.org_id);
    const data: Data = { ...(event.data as Data) };
    for (const field of fields) data[field.field] = sealField(key, data[field.field], field, event.type);
    return { ...event, data };
  }

  private async openEvent(recorded: RecordedEvent, keyOf: (key_id: string) => Promise<Buffer | null>): Promise<RecordedEvent> {
    const event = upcast(recorded);
    if (!writtenSealed(recorded.type, recorded.metadata.schema_version ?? 1)) return event;
    const data: Data = { ...(event.data as Data) };
    for (const field of sealedFieldsOf(event.type)) {
      const associated = `${event.type}.${field.field}`;
      /** The value in its text form (see textOf), or null when it is not sealed or its key was shredded. */
      const open = async (value: unknown, where: string): Promise<string | null> => {
        const parsed = typeof value === 'string' ? parseSealedValue(value) : null;
        if (!parsed) return null;
        const key = await keyOf(parsed.key_id);
        if (!key) return null; // shredded: stays sealed
        const id = `${recorded.id} ${where}`;
        try {
          const text = this.opened.get(id) ?? textOf(openValue(key, parsed.sealed, where), field);
          this.opened.set(id, text);
          return text;
        } catch {
          throw new Error(`${where} of event ${recorded.id} does not open with its key ${parsed.key_id}: the event or the key store is damaged`);
        }
      };
      const value = data[field.field];
      if (field.kind === 'values') {
        if (typeof value !== 'object' || value === null) continue;
        const opened: Record<string, string> = {};
        for (const [name, sealed] of Object.entries(value as Record<string, string>)) {
          opened[name] = (await open(sealed, `${associated}.${name}`)) ?? sealed;
        }
        data[field.field] = opened;
        continue;
      }
      const text = await open(value, associated);
      if (text !== null) data[field.field] = field.kind === 'json' ? JSON.parse(text) : text;
    }
    return { ...event, data };
  }
}

/** Whether the field has something to seal (null, an empty map and no body have nothing). */
function holdsSecret(value: unknown, kind: SealedField['kind']): boolean {
  if (value === null || value === undefined) return false;
  if (kind === 'values') return typeof value === 'object' && Object.keys(value).length > 0;
  return true;
}

function sealField(key: DataKey, value: unknown, field: SealedField, type: string): unknown {
  const associated = `${type}.${field.field}`;
  switch (field.kind) {
    case 'values':
      return Object.fromEntries(Object.entries(value as Record<string, string>).map(([name, v]) => [name, sealValue(key, Buffer.from(v, 'utf8'), `${associated}.${name}`)]));
    case 'text':
      return sealValue(key, Buffer.from(value as string, 'utf8'), associated);
    case 'bytes':
      return sealValue(key, Buffer.from(value as string, 'base64'), associated);
    case 'json':
      return sealValue(key, Buffer.from(JSON.stringify(value), 'utf8'), associated);
  }
}

/** A field's plaintext as the event holds it in clear: base64 for bytes, else UTF-8 text (JSON parsed by the caller, so nobody shares a mutable object). */
function textOf(plaintext: Buffer, field: SealedField): string {
  return plaintext.toString(field.kind === 'bytes' ? 'base64' : 'utf8');
}

/** A map read from the log without the values that stay sealed (their key was shredded): what is left of it. */
export function withoutSealedValues(values: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => !isSealed(value)));
}
