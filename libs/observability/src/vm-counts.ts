/** VMs by state, counted by whoever can see them cheaply (the api, from the read models). */
export type VmCounter = () => Promise<Record<string, number>>;

let counter: VmCounter | null = null;

/** Reports VMs by state on /metrics with `count` until the returned function is called. */
export function reportVmCounts(count: VmCounter): () => void {
  counter = count;
  return () => {
    if (counter === count) counter = null;
  };
}

/** The counts now, or null when nobody in this process reports them (or they cannot be read). */
export async function vmCounts(): Promise<Record<string, number> | null> {
  try {
    return counter ? await counter() : null;
  } catch {
    return null;
  }
}
