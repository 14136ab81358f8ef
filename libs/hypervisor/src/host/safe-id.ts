/** VM and snapshot ids become directory and cgroup names: allow nothing that could escape them. */
const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

export function isSafeId(id: string): boolean {
  return SAFE_ID.test(id);
}
