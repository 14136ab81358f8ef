/**
 * Per-machine serialisation inside one driver: lifecycle operations on one machine (pause,
 * resume, commit, resize, destroy) run one at a time, in call order, so that one never lands
 * inside another (e.g. a pause during a commit, which the commit's end would undo).
 */
export class MachineLocks {
  private readonly tails = new Map<string, Promise<unknown>>();

  /** Runs `work` after every earlier operation on `vm_id` has settled. */
  run<T>(vm_id: string, work: () => Promise<T>): Promise<T> {
    const run = (this.tails.get(vm_id) ?? Promise.resolve()).then(work, work);
    const settled = run.catch(() => undefined);
    this.tails.set(vm_id, settled);
    void settled.then(() => {
      if (this.tails.get(vm_id) === settled) this.tails.delete(vm_id);
    });
    return run;
  }

  /** Resolves once the operations on `vm_id` started so far have settled. */
  async idle(vm_id: string): Promise<void> {
    await this.tails.get(vm_id);
  }
}
