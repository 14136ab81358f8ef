import { keyHolderIdOf } from '../api-key/key-holder';

/**
 * Upcasters: for an event type, a function per old schema version that returns its data at the
 * next version. History is never rewritten: events are brought up to date as they are read. When
 * an event's data changes shape, its catalogue entry gets a new schema_version and an upcaster
 * from the one before is added here (the catalogue spec checks both).
 */
export type Upcaster = (data: any) => any;

export const UPCASTERS: Readonly<Record<string, Readonly<Record<number, Upcaster>>>> = {
  // v1 keys were issued before users existed (the first start's admin key): they act as their key holder.
  ApiKeyIssued: { 1: (data) => ({ ...data, user_id: keyHolderIdOf(data.key_id) }) },
};
