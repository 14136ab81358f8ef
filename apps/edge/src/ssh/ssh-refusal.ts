/** SSH_DISCONNECT_SERVICE_NOT_AVAILABLE (RFC 4253 §11.1): the reason code of every refusal. */
export const SSH_DISCONNECT_SERVICE_NOT_AVAILABLE = 7;
/** The edge's own version string, sent only to refuse (a routed client hears the VM's sshd). */
export const EDGE_SSH_VERSION = 'SSH-2.0-ArborEdge';
/** OpenSSH prints at most 400 characters of a disconnect's description. */
const MAX_REASON_CHARS = 400;
const SSH_MSG_DISCONNECT = 1;
/** Before key exchange packets are unencrypted, padded to a multiple of 8 bytes, with at least 4 bytes of padding. */
const BLOCK = 8;
const MIN_PADDING = 4;

/**
 * What the edge says to an SSH client it cannot route (a paused VM, a missing one, a closed
 * port), so the user reads why rather than "Connection closed": a text line (SSH lets a server
 * send lines before its version string; OpenSSH shows them with -v), the edge's version string,
 * then an unencrypted SSH_MSG_DISCONNECT whose description is the reason. Clients print that
 * one: OpenSSH "Received disconnect from …:7: <reason>", Go's x/crypto/ssh (the Vers CLI)
 * "ssh: disconnect, reason 7: <reason>". No key exchange is needed before a disconnect.
 */
export function sshRefusal(reason: string): Buffer {
  const text = printable(reason);
  return Buffer.concat([Buffer.from(`arbor edge: ${text}\r\n${EDGE_SSH_VERSION}\r\n`, 'utf8'), disconnectPacket(SSH_DISCONNECT_SERVICE_NOT_AVAILABLE, text)]);
}

/** The reason on one line, without control characters, bounded. */
function printable(reason: string): string {
  const line = reason.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  return line.length > MAX_REASON_CHARS ? `${line.slice(0, MAX_REASON_CHARS - 1)}…` : line;
}

/** byte SSH_MSG_DISCONNECT, uint32 reason code, string description, string language tag; in a binary packet without MAC. */
function disconnectPacket(code: number, description: string): Buffer {
  const payload = Buffer.concat([Buffer.from([SSH_MSG_DISCONNECT]), uint32(code), sshString(description), sshString('')]);
  let padding = BLOCK - ((4 + 1 + payload.length) % BLOCK);
  if (padding < MIN_PADDING) padding += BLOCK;
  return Buffer.concat([uint32(1 + payload.length + padding), Buffer.from([padding]), payload, Buffer.alloc(padding)]);
}

function uint32(value: number): Buffer {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(value);
  return bytes;
}

function sshString(value: string): Buffer {
  const bytes = Buffer.from(value, 'utf8');
  return Buffer.concat([uint32(bytes.length), bytes]);
}
