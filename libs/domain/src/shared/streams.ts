/** Stream naming: one stream per aggregate instance (docs/design.md#the-log). */
export const streams = {
  vm: (vmId: string) => `vm-${vmId}`,
  /** Reservation stream: the worker (host) a VM is placed on; the first claim wins. */
  placement: (vmId: string) => `placement-${vmId}`,
  org: (orgId: string) => `org-${orgId}`,
  commit: (commitId: string) => `commit-${commitId}`,
  /** Reservation stream of a client-chosen commit id: the first VM asked to commit under it holds it. */
  commitIdReservation: (commitId: string) => `commitid-${commitId}`,
  /** Tag names are unique per org: the stream is the name's reservation. */
  tag: (orgId: string, tagName: string) => `tag-${orgId}-${tagName}`,
  apiKey: (keyId: string) => `apikey-${keyId}`,
  /** Reservation stream: appended with no_stream by the one and only first start. */
  bootstrap: () => 'system-bootstrap',
  idempotency: (orgId: string, keyHash: string) => `idempotency-${orgId}-${keyHash}`,
  guestFile: (opId: string) => `guestfile-${opId}`,
  exec: (execId: string) => `exec-${execId}`,
};

/** The aggregate kind a stream belongs to (its prefix up to the first dash). */
export function streamCategory(streamId: string): string {
  const dash = streamId.indexOf('-');
  return dash < 0 ? streamId : streamId.slice(0, dash);
}
