// Restarting a crashed server with backoff: 1 s, 2 s, 4 s ... capped, and given up after too many
// crashes in a short window (a server that cannot start should not spin).

export class Backoff {
  private crashes: number[] = [];

  constructor(
    private readonly baseMs = 1000,
    private readonly maxMs = 30000,
    private readonly window = 5,
    private readonly windowMs = 180000,
  ) {}

  /** The delay before the next restart, or undefined to give up. */
  next(now: number): number | undefined {
    this.crashes = this.crashes.filter((t) => now - t < this.windowMs);
    this.crashes.push(now);
    if (this.crashes.length > this.window) {
      return undefined;
    }
    return Math.min(this.maxMs, this.baseMs * 2 ** (this.crashes.length - 1));
  }
}
