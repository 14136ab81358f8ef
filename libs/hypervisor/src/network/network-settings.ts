/** How machines are networked on this host (ARBOR_VM_* settings; see the README's configuration). */
export interface NetworkSettings {
  /**
   * The host bridge every machine's interface is a port of: created, addressed and filtered by
   * Arbor (nftables tables of the same name). One per installation: two installations on one host
   * name two bridges.
   */
  bridge: string;
  /** Where machines' IPv4 addresses (for egress, NATed) come from; its first address is the host's. */
  ipv4Subnet: string;
  /**
   * The /64 machines' IPv6 addresses (the contract's `ip`) come from; its ::1 is the host's. null:
   * a unique local /64 derived from this host's machine id. A configured prefix is meant to be
   * routed to this host, so connections from outside may reach machines over it.
   */
  ipv6Prefix: string | null;
  /** Machines may open connections out of the host (NATed to the host's address). */
  egress: boolean;
}

export const DEFAULT_NETWORK_SETTINGS: NetworkSettings = {
  bridge: 'arbor0',
  ipv4Subnet: '10.213.0.0/16',
  ipv6Prefix: null,
  egress: true,
};

/** An interface name the kernel takes (at most 15 bytes) and nft can quote: letters, digits, `-`, `_`. */
export const BRIDGE_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,14}$/;
