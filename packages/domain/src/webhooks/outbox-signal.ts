import type { OutboxSignal } from '../resources';

/**
 * The outbox signal of one process (`services.outbox`): a transition that wrote webhook events
 * raises it after commit (jobs/announce.ts), and the process's dispatcher (delivery/webhook-dispatch.ts
 * dispatchEvents, run by apps/worker/src/webhooks.ts) listens, so it moves the events at once
 * rather than at its next timed look. Listeners are called on the next turn of the event loop,
 * once however often it was raised in this one.
 */
export class LocalSignal implements OutboxSignal {
  private readonly listeners = new Set<() => void>();
  private raised = false;

  written(): void {
    if (this.raised || this.listeners.size === 0) return;
    this.raised = true;
    setImmediate(() => {
      this.raised = false;
      for (const listener of this.listeners) listener();
    });
  }

  /** Calls `listener` whenever the signal is raised; returns the function that stops it. */
  listen(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
