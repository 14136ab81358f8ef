import type { Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import { KEEPALIVE_IDLE_MS, OpenConnections } from './open-connections';

/** A stand-in socket: a stream that records its keepalive setting. */
const socket = () => Object.assign(new PassThrough(), { setKeepAlive: jest.fn() }) as unknown as Socket & { setKeepAlive: jest.Mock };

describe('the open connections of an edge', () => {
  it('sets TCP keepalive on the VM side of the connections open a whole sweep period, once, and on no short one', () => {
    const connections = new OpenConnections();
    const lasting = connections.add('vm-1', null, socket());
    const upstream = socket();
    connections.attach(lasting, upstream);
    connections.keepAliveLasting(); // opened during this period: maybe a moment ago
    expect(upstream.setKeepAlive).not.toHaveBeenCalled();
    const late = connections.add('vm-1', null, socket());
    const lateUpstream = socket();
    connections.attach(late, lateUpstream);
    connections.keepAliveLasting();
    expect(upstream.setKeepAlive).toHaveBeenCalledWith(true, KEEPALIVE_IDLE_MS);
    expect(lateUpstream.setKeepAlive).not.toHaveBeenCalled();
    connections.keepAliveLasting();
    expect(upstream.setKeepAlive).toHaveBeenCalledTimes(1);
    expect(lateUpstream.setKeepAlive).toHaveBeenCalledTimes(1);
  });

  it("ends a VM's connections, both sides, and a domain's, and forgets each once closed", async () => {
    const connections = new OpenConnections();
    const [client, upstream, other] = [socket(), socket(), socket()];
    connections.attach(connections.add('vm-1', 'app.example.com', client), upstream);
    connections.add('vm-2', null, other);
    expect(connections.size).toBe(2);
    expect(connections.closeDomain('app.example.com')).toBe(1);
    expect([client.destroyed, upstream.destroyed, other.destroyed]).toEqual([true, true, false]);
    other.destroy();
    await new Promise((resolve) => other.once('close', resolve));
    expect(connections.size).toBe(0);
    expect(connections.closeVm('vm-2')).toBe(0);
  });
});
