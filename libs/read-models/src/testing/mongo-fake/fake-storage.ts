import type { Document } from 'bson';
import { cloneDocument } from './bson-values';
import { CommandError } from './command-error';

interface StoredCollection {
  documents: Document[];
  /** Bumped by every committed write; a transaction that copied an older version conflicts. */
  version: number;
}

/** A transaction's private working copies of the collections it wrote; applied on commit. */
class Transaction {
  readonly copies = new Map<string, { documents: Document[]; baseVersion: number }>();
}

const TRANSIENT = ['TransientTransactionError'];

/**
 * The fake's in-memory data, keyed by namespace ("db.collection"). Writes in a transaction go to a
 * copy of each touched collection, swapped in on commit and dropped on abort, so a transaction is
 * all-or-nothing. This is not MongoDB's snapshot isolation: reads outside the transaction see only
 * committed data, reads inside see the transaction's own writes, and a commit whose collections
 * changed meanwhile fails with a transient WriteConflict (the driver then retries the transaction).
 */
export class FakeStorage {
  private readonly committed = new Map<string, StoredCollection>();
  private readonly transactions = new Map<string, Transaction>();

  /** Starts the transaction `key`, or checks that it is still open (NoSuchTransaction otherwise). */
  joinTransaction(key: string, start: boolean): void {
    if (start) this.transactions.set(key, new Transaction());
    else this.transaction(key);
  }

  /** Documents to read: the transaction's copy when it has one, else the committed ones. */
  read(namespace: string, transactionKey?: string): Document[] {
    const copy = transactionKey ? this.transaction(transactionKey).copies.get(namespace) : undefined;
    return copy?.documents ?? this.stored(namespace).documents;
  }

  /** Documents to modify in place: the transaction's copy (made on first write), else the committed ones. */
  write(namespace: string, transactionKey?: string): Document[] {
    const stored = this.stored(namespace);
    if (!transactionKey) {
      stored.version++;
      return stored.documents;
    }
    const transaction = this.transaction(transactionKey);
    let copy = transaction.copies.get(namespace);
    if (!copy) {
      copy = { documents: stored.documents.map(cloneDocument), baseVersion: stored.version };
      transaction.copies.set(namespace, copy);
    }
    return copy.documents;
  }

  commitTransaction(key: string): void {
    const transaction = this.transaction(key);
    this.transactions.delete(key);
    for (const [namespace, copy] of transaction.copies) {
      if (this.stored(namespace).version !== copy.baseVersion) {
        throw new CommandError(112, 'WriteConflict', `write conflict on ${namespace}`, TRANSIENT);
      }
    }
    for (const [namespace, copy] of transaction.copies) {
      const stored = this.stored(namespace);
      stored.documents = copy.documents;
      stored.version++;
    }
  }

  abortTransaction(key: string): void {
    this.transaction(key);
    this.transactions.delete(key);
  }

  private transaction(key: string): Transaction {
    const transaction = this.transactions.get(key);
    if (!transaction) throw new CommandError(251, 'NoSuchTransaction', `no such transaction ${key}`, TRANSIENT);
    return transaction;
  }

  private stored(namespace: string): StoredCollection {
    let stored = this.committed.get(namespace);
    if (!stored) {
      stored = { documents: [], version: 0 };
      this.committed.set(namespace, stored);
    }
    return stored;
  }
}
