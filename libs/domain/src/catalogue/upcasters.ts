import { keyHolderIdOf } from '../api-key/key-holder';

/**
 * Upcasters: for an event type, a function per old schema version that returns its data at the
 * next version. History is never rewritten: events are brought up to date as they are read. When
 * an event's data changes shape, its catalogue entry gets a new schema_version and an upcaster
 * from the one before is added here (the catalogue spec checks both).
 */
export type Upcaster = (data: any) => any;

/**
 * Version 1 of these held their secrets in clear; from version 2 on the log holds them sealed
 * (SEALED_SINCE). The data keeps its shape, so the upcaster leaves it as it is: a reader opens the
 * sealed values of events written at version 2 or later, and takes those of older ones as they are.
 */
const sealedFromNowOn: Upcaster = (data) => data;

export const UPCASTERS: Readonly<Record<string, Readonly<Record<number, Upcaster>>>> = {
  ExecRequested: { 1: sealedFromNowOn },
  FileContentChunk: { 1: sealedFromNowOn },
  EnvVarsSet: { 1: sealedFromNowOn },
  IdempotentResponseRecorded: { 1: sealedFromNowOn },
  // Sealed env from version 2, and the SSH key generation: every key before generations came from the one secret, generation 1.
  VmCreationRequested: {
    1: (data) => ({ ...data, ssh_key_generation: data.ssh_public_key ? 1 : null }),
    // through_public_repository joined as an optional field: absent, as before, means false.
    2: (data) => data,
    // image_id joined as an optional field: absent, as before, means the driver's built-in image.
    3: (data) => data,
  },
  ForkRequested: { 1: (data) => ({ ...data, vm_ssh_key_generation: 1 }) },
  // 'rekey' joined the operations; nothing of an older event changes.
  VmOperationFailed: { 1: (data) => data },
  // v1 keys were issued before users existed (the first start's admin key): they act as their key holder.
  ApiKeyIssued: { 1: (data) => ({ ...data, user_id: keyHolderIdOf(data.key_id) }) },
};
