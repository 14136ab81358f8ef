/** A seeded generator (mulberry32): the same seed makes the same choices, so a failing run replays. */
export interface SeededRandom {
  /** In [0, 1). */
  next(): number;
  /** A whole number in [0, n). */
  below(n: number): number;
  pick<T>(items: readonly T[]): T;
}

export function seededRandom(seed: number): SeededRandom {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const below = (n: number) => Math.floor(next() * n);
  return { next, below, pick: (items) => items[below(items.length)] };
}
