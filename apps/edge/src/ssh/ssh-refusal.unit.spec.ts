import { EDGE_SSH_VERSION, SSH_DISCONNECT_SERVICE_NOT_AVAILABLE, sshRefusal } from './ssh-refusal';

/** The refusal read back as an SSH client reads it: lines up to the version string, then one binary packet. */
function readRefusal(bytes: Buffer) {
  const text = bytes.toString('latin1');
  const versionAt = text.indexOf(`${EDGE_SSH_VERSION}\r\n`);
  const lines = text.slice(0, versionAt).split('\r\n').filter(Boolean);
  const packet = bytes.subarray(versionAt + EDGE_SSH_VERSION.length + 2);
  const length = packet.readUInt32BE(0);
  const padding = packet[4];
  const payload = packet.subarray(5, 4 + length - padding);
  const descriptionLength = payload.readUInt32BE(5);
  return {
    lines,
    packetBytes: packet.length,
    length,
    padding,
    type: payload[0],
    code: payload.readUInt32BE(1),
    description: payload.subarray(9, 9 + descriptionLength).toString('utf8'),
    language: payload.readUInt32BE(9 + descriptionLength),
  };
}

describe('the edge refusing an SSH client', () => {
  it('says why in a line before its version string, then in an SSH_MSG_DISCONNECT the client prints', () => {
    const reason = 'vm 1234 is paused: resume it (PATCH /api/v1/vm/1234/state {"state":"Running"}) and connect again';
    const refusal = readRefusal(sshRefusal(reason));
    expect(refusal.lines).toEqual([`arbor edge: ${reason}`]);
    expect(refusal.lines.every((line) => !line.startsWith('SSH-'))).toBe(true); // RFC 4253 §4.2
    expect(refusal).toMatchObject({ type: 1, code: SSH_DISCONNECT_SERVICE_NOT_AVAILABLE, description: reason, language: 0 });
    expect(refusal.packetBytes).toBe(4 + refusal.length);
    expect(refusal.packetBytes % 8).toBe(0);
    expect(refusal.padding).toBeGreaterThanOrEqual(4);
  });

  it('keeps a reason to one bounded line of text', () => {
    const refusal = readRefusal(sshRefusal(`evil\r\nSSH-2.0-spoof\u0007 ${'x'.repeat(1000)}`));
    expect(refusal.lines).toHaveLength(1);
    expect(refusal.description.startsWith('evil SSH-2.0-spoof  x')).toBe(true);
    expect([...refusal.description]).toHaveLength(400);
  });
});
