import { deserialize, serialize, type Document } from 'bson';

/** A deep copy that keeps BSON types (ObjectId, Date, Long …), which structuredClone would not. */
export function cloneDocument<T extends Document>(document: T): T {
  return deserialize(serialize(document)) as T;
}

/** A key under which two BSON values are equal exactly when the server would call them equal (for _id). */
export function valueKey(value: unknown): string {
  return Buffer.from(serialize({ v: value })).toString('hex');
}

export function sameDocument(a: Document, b: Document): boolean {
  return Buffer.from(serialize(a)).equals(Buffer.from(serialize(b)));
}
