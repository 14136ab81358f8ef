/** What the first bytes of a TLS connection say, read without taking part in the handshake. */
export type ClientHello =
  | { kind: 'incomplete' }
  | { kind: 'not_tls'; reason: string }
  /** `server_name`: the SNI host name, lowercase (null: the client sent none). */
  | { kind: 'hello'; server_name: string | null };

/** A ClientHello spread over records past this is refused (real ones fit in one 16 KiB record). */
export const MAX_CLIENT_HELLO_BYTES = 64 * 1024;

const RECORD_HANDSHAKE = 0x16;
const HANDSHAKE_CLIENT_HELLO = 0x01;
const EXTENSION_SERVER_NAME = 0x0000;
const NAME_TYPE_HOST_NAME = 0x00;

/**
 * Reads the SNI out of a TLS ClientHello (RFC 8446 §4.1.2, RFC 6066 §3) from the bytes received so
 * far, so the edge can route before it decides whether to end the TLS session itself (a VM's
 * name) or pass it through untouched (a custom domain). Every length is checked against what
 * is there; the handshake message may span several records.
 */
export function parseClientHello(bytes: Buffer): ClientHello {
  if (bytes.length === 0) return { kind: 'incomplete' };
  if (bytes[0] !== RECORD_HANDSHAKE) return { kind: 'not_tls', reason: 'not a TLS handshake' };
  // The handshake layer's bytes, from as many complete records as there are.
  const fragments: Buffer[] = [];
  let offset = 0;
  let handshakeBytes = 0;
  while (offset + 5 <= bytes.length) {
    if (bytes[offset] !== RECORD_HANDSHAKE) return { kind: 'not_tls', reason: 'the ClientHello is interrupted by another record' };
    if (bytes[offset + 1] !== 0x03) return { kind: 'not_tls', reason: 'not a TLS record version' };
    const length = bytes.readUInt16BE(offset + 3);
    if (length === 0 || length > 16_384 + 256) return { kind: 'not_tls', reason: 'a TLS record of an impossible length' };
    if (offset + 5 + length > bytes.length) break;
    fragments.push(bytes.subarray(offset + 5, offset + 5 + length));
    handshakeBytes += length;
    offset += 5 + length;
  }
  const handshake = Buffer.concat(fragments, handshakeBytes);
  if (handshake.length < 4) return bytes.length > MAX_CLIENT_HELLO_BYTES ? { kind: 'not_tls', reason: 'no ClientHello' } : { kind: 'incomplete' };
  if (handshake[0] !== HANDSHAKE_CLIENT_HELLO) return { kind: 'not_tls', reason: 'the first handshake message is not a ClientHello' };
  const length = handshake.readUIntBE(1, 3);
  if (length > MAX_CLIENT_HELLO_BYTES) return { kind: 'not_tls', reason: 'a ClientHello larger than the edge takes' };
  if (handshake.length < 4 + length) return { kind: 'incomplete' };
  return readServerName(handshake.subarray(4, 4 + length));
}

function readServerName(hello: Buffer): ClientHello {
  const malformed: ClientHello = { kind: 'not_tls', reason: 'a malformed ClientHello' };
  const reader = new Reader(hello);
  if (!reader.skip(2 + 32)) return malformed; // legacy_version, random
  if (!reader.skip(reader.u8())) return malformed; // legacy_session_id
  if (!reader.skip(reader.u16())) return malformed; // cipher_suites
  if (!reader.skip(reader.u8())) return malformed; // legacy_compression_methods
  if (reader.remaining() === 0) return { kind: 'hello', server_name: null }; // no extensions at all
  const extensions = reader.slice(reader.u16());
  if (!extensions) return malformed;
  while (extensions.remaining() > 0) {
    const type = extensions.u16();
    const data = extensions.slice(extensions.u16());
    if (!data) return malformed;
    if (type !== EXTENSION_SERVER_NAME) continue;
    const names = data.slice(data.u16());
    if (!names) return malformed;
    while (names.remaining() > 0) {
      const nameType = names.u8();
      const name = names.slice(names.u16());
      if (!name) return malformed;
      if (nameType !== NAME_TYPE_HOST_NAME) continue;
      const text = name.rest().toString('latin1');
      if (!/^[\x21-\x7e]{1,255}$/.test(text)) return { kind: 'not_tls', reason: 'an SNI host name that is not printable ASCII' };
      return { kind: 'hello', server_name: text.toLowerCase().replace(/\.$/, '') };
    }
    return { kind: 'hello', server_name: null };
  }
  return { kind: 'hello', server_name: null };
}

/** Reads a buffer front to back; a read past the end leaves it `broken` (every later slice is null). */
class Reader {
  private offset = 0;
  private broken = false;

  constructor(private readonly bytes: Buffer) {}

  remaining(): number {
    return this.broken ? 0 : this.bytes.length - this.offset;
  }

  u8(): number {
    if (this.remaining() < 1) return this.fail();
    return this.bytes[this.offset++];
  }

  u16(): number {
    if (this.remaining() < 2) return this.fail();
    const value = this.bytes.readUInt16BE(this.offset);
    this.offset += 2;
    return value;
  }

  skip(count: number): boolean {
    if (this.broken || this.remaining() < count) return (this.fail(), false);
    this.offset += count;
    return true;
  }

  slice(count: number): Reader | null {
    if (this.broken || this.remaining() < count) return (this.fail(), null);
    const part = new Reader(this.bytes.subarray(this.offset, this.offset + count));
    this.offset += count;
    return part;
  }

  rest(): Buffer {
    return this.bytes.subarray(this.offset);
  }

  private fail(): number {
    this.broken = true;
    return 0;
  }
}

/** A fatal `unrecognized_name` alert (RFC 6066 §3): what a client hears for a name the edge does not serve. */
export const UNRECOGNIZED_NAME_ALERT = Buffer.from([0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x70]);
