export type BreakerState = 'closed' | 'open' | 'half-open';

export interface BreakerOptions {
  /** Consecutive failed attempts that open the breaker. */
  failures: number;
  /** How long an open breaker holds deliveries back before one probe is let through; doubles per failed probe. */
  cooldownMs: number;
  /** Upper bound of the growing cooldown. */
  maxCooldownMs?: number;
  now?: () => number;
}

interface Circuit {
  consecutiveFailures: number;
  openUntil: number;
  cooldownMs: number;
  probing: boolean;
}

/**
 * One circuit breaker per subscription (its receiver). Open: the dispatcher claims none of its due rows, so
 * they wait without spending attempts. After the cooldown it is half-open: one delivery is sent as a probe;
 * success closes it, failure opens it again for twice as long. State is per process: each instance learns
 * a receiver's health from its own attempts.
 */
export function createBreakers(options: BreakerOptions) {
  const now = options.now ?? Date.now;
  const maxCooldownMs = options.maxCooldownMs ?? Math.max(options.cooldownMs, 10 * 60_000);
  const circuits = new Map<string, Circuit>();

  function stateOf(subscriptionId: string): BreakerState {
    const c = circuits.get(subscriptionId);
    if (!c || c.openUntil === 0) return 'closed';
    return now() < c.openUntil ? 'open' : 'half-open';
  }

  return {
    stateOf,

    /** Subscriptions whose rows must not be claimed now, and those allowed exactly one (the probe). */
    restrictions(): { blocked: string[]; probeOnly: string[] } {
      const blocked: string[] = [];
      const probeOnly: string[] = [];
      for (const [id, c] of circuits) {
        const state = stateOf(id);
        if (state === 'open' || (state === 'half-open' && c.probing)) blocked.push(id);
        else if (state === 'half-open') probeOnly.push(id);
      }
      return { blocked, probeOnly };
    },

    /** A claimed row is about to be sent: in half-open state it is the probe. */
    started(subscriptionId: string): void {
      const c = circuits.get(subscriptionId);
      if (c && stateOf(subscriptionId) === 'half-open') c.probing = true;
    },

    /** Records an attempt's result; returns the new state. */
    record(subscriptionId: string, ok: boolean): BreakerState {
      if (ok) {
        circuits.delete(subscriptionId);
        return 'closed';
      }
      const c = circuits.get(subscriptionId) ?? {
        consecutiveFailures: 0,
        openUntil: 0,
        cooldownMs: options.cooldownMs,
        probing: false,
      };
      circuits.set(subscriptionId, c);
      c.consecutiveFailures++;
      if (c.probing) {
        c.probing = false;
        c.cooldownMs = Math.min(c.cooldownMs * 2, maxCooldownMs);
        c.openUntil = now() + c.cooldownMs;
      } else if (c.openUntil === 0 && c.consecutiveFailures >= options.failures) {
        c.openUntil = now() + c.cooldownMs;
      }
      return stateOf(subscriptionId);
    },

    /** A send ended without a result (shutdown): a probe in flight no longer counts. */
    released(subscriptionId: string): void {
      const c = circuits.get(subscriptionId);
      if (c) c.probing = false;
    },

    /** Milliseconds until the next breaker turns half-open (to wake the dispatcher then), or null. */
    nextReopenInMs(): number | null {
      let next: number | null = null;
      for (const c of circuits.values()) {
        if (c.openUntil > now() && (next === null || c.openUntil - now() < next)) next = c.openUntil - now();
      }
      return next;
    },
  };
}

export type Breakers = ReturnType<typeof createBreakers>;
