/**
 * A background pump: `batch` (one claim-and-work batch; true when it took a full batch, so more
 * may wait) run on a timer and at once when kicked, batch after batch until one comes back
 * short. Passes never overlap: a kick during a pass runs another right after it. Any number of
 * pumps of the same work may run in several processes when their claims skip each other's rows
 * (`for update skip locked`). The mail sender and the auto-recharge charger are pumps.
 */
export class Pump {
  private readonly timer: NodeJS.Timeout;
  private running: Promise<void> | null = null;
  private again = false;
  private closed = false;

  constructor(
    private readonly batch: () => Promise<boolean>,
    intervalMs: number,
    private readonly onError: (err: Error) => void,
  ) {
    this.timer = setInterval(() => this.kick(), intervalMs);
    this.timer.unref();
    this.kick();
  }

  /** Runs a pass now (or right after the pass in progress). */
  kick(): void {
    if (this.closed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.drain()
      .catch((err: Error) => this.onError(err))
      .finally(() => {
        this.running = null;
      });
  }

  /** Resolves once the pass in progress (if any) has ended. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  /** Stops the timer and lets the pass in progress finish. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await this.idle();
  }

  private async drain(): Promise<void> {
    do {
      this.again = false;
      while (!this.closed && (await this.batch()));
    } while (this.again && !this.closed);
  }
}
