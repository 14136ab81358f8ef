import { EventEmitter } from 'node:events';
import { waitUntil } from './wait-until';
import { type Wake, WakeOnChange } from './wake-on-change';

/** Changes made in this process, as a store announces them (onAppended, onCommitted). */
function changes() {
  const emitter = new EventEmitter();
  const wake: Wake = (listener) => {
    emitter.on('change', listener);
    return () => emitter.off('change', listener);
  };
  return { wake, change: () => emitter.emit('change'), listeners: () => emitter.listenerCount('change') };
}

// The poll intervals here are a minute: a wait that ends inside the test's time was woken, not polled.
const MINUTE = 60_000;

describe('waking polling loops on in-process changes', () => {
  it('a change heard ends a sleep at once', async () => {
    const { wake, change } = changes();
    const watch = new WakeOnChange(wake);
    watch.mark();
    const slept = watch.sleep(MINUTE);
    change();
    await slept;
    watch.close();
  });

  it('a change heard between the look and the sleep is not slept through', async () => {
    const { wake, change } = changes();
    const watch = new WakeOnChange(wake);
    watch.mark();
    change(); // after the look, before the sleep
    await watch.sleep(MINUTE);
    watch.close();
  });

  it('an abort ends a sleep; closing stops listening', async () => {
    const { wake, listeners } = changes();
    const watch = new WakeOnChange(wake);
    const abort = new AbortController();
    const slept = watch.sleep(MINUTE, abort.signal);
    abort.abort();
    await slept;
    expect(listeners()).toBe(1);
    watch.close();
    expect(listeners()).toBe(0);
  });

  it('waitUntil probes again on a change instead of waiting out its interval, and stops listening once answered', async () => {
    const { wake, change, listeners } = changes();
    let ready = false;
    const waiting = waitUntil('the change', async () => (ready ? 'done' : undefined), { timeoutMs: 2 * MINUTE, intervalMs: MINUTE, wake });
    await new Promise((resolve) => setImmediate(resolve));
    ready = true;
    change();
    await expect(waiting).resolves.toBe('done');
    expect(listeners()).toBe(0);
  });
});
