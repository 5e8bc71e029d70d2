// Benchmark: signing webhook deliveries with secrets opened from their ciphertexts (AES-256-GCM) against
// signing with the plaintext secrets in hand, in one process, no database. Three variants per round,
// alternating: plaintext (the baseline), sealed secrets through the box's cache (what the dispatcher does),
// and sealed secrets decrypted every time (cache off). 1,000 subscriptions, one in four in a rotation overlap
// (two secrets), a 1 KB event body; medians over BENCH_ROUNDS (21) rounds of BENCH_OPS (20,000) signings each,
// each round in another order (a rotation of the three), so no variant always runs first or last.
// Usage: npm run bench:secrets. Env: BENCH_ROUNDS (21), BENCH_OPS (20000).
import { randomBytes, randomUUID } from 'node:crypto';
import { createKeyring } from '../src/core/secret-keys.ts';
import { createSecretBox, type StoredSecrets } from '../src/security/secret-box.ts';
import { newWebhookSecret, signEnvelope } from '../src/delivery/signer.ts';
import { num } from './lib/env.ts';
import { writeResults } from './lib/results.ts';
import { median, round } from './lib/stats.ts';

const ROUNDS = num('BENCH_ROUNDS', 21);
const OPS = num('BENCH_OPS', 20_000);
const SUBSCRIPTIONS = 1_000;

const keyring = createKeyring([{ id: 'k1', key: randomBytes(32) }]);
const cached = createSecretBox(keyring);
const uncached = createSecretBox(keyring, { cacheTtlMs: 0 });
const later = new Date(Date.now() + 3600_000);
const subs = Array.from({ length: SUBSCRIPTIONS }, (_, i) => {
  const id = randomUUID();
  const plain = i % 4 === 0 ? [newWebhookSecret(), newWebhookSecret()] : [newWebhookSecret()];
  const stored: StoredSecrets = {
    secret: null,
    previousSecret: null,
    secretCiphertext: cached.sealSecret(id, 'current', plain[0]),
    previousSecretCiphertext: plain[1] ? cached.sealSecret(id, 'previous', plain[1]) : null,
    previousSecretExpiresAt: plain[1] ? later : null,
  };
  return { id, plain, stored };
});
const data = { text: 'x'.repeat(1000) };

type Variant = 'plaintext' | 'sealed, cached' | 'sealed, no cache';
function run(variant: Variant): number {
  const now = new Date();
  const started = process.hrtime.bigint();
  for (let i = 0; i < OPS; i++) {
    const s = subs[i % SUBSCRIPTIONS];
    const secrets =
      variant === 'plaintext'
        ? s.plain
        : (variant === 'sealed, cached' ? cached : uncached).liveSecrets(s.id, s.stored, now);
    signEnvelope(secrets, { id: `d${i}`, eventId: 'e', event: 'asset.created', organizationId: 'o', data }, { now });
  }
  return OPS / (Number(process.hrtime.bigint() - started) / 1e9);
}

const variants: Variant[] = ['plaintext', 'sealed, cached', 'sealed, no cache'];
run('sealed, cached'); // warm-up (and fills the cache)
run('plaintext');
const results = new Map<Variant, number[]>(variants.map((v) => [v, []]));
const ratios = new Map<Variant, number[]>(variants.map((v) => [v, []]));
for (let r = 0; r < ROUNDS; r++) {
  const order = [...variants.slice(r % 3), ...variants.slice(0, r % 3)];
  const round = new Map(order.map((v) => [v, run(v)]));
  for (const v of variants) {
    results.get(v)!.push(round.get(v)!);
    ratios.get(v)!.push(round.get(v)! / round.get('plaintext')!);
  }
}
console.log(`| Variant | Signings/s (median of ${ROUNDS}) | vs plaintext (median of per-round ratios) |`);
console.log('|---|---|---|');
for (const v of variants)
  console.log(
    `| ${v} | ${Math.round(median(results.get(v)!)).toLocaleString('en')} | ${median(ratios.get(v)!).toFixed(2)}× |`,
  );

// The same cost measured directly: opening alone (no signing) per delivery, beside signing alone.
function perOp(fn: (i: number) => void): number {
  const started = process.hrtime.bigint();
  for (let i = 0; i < OPS; i++) fn(i);
  return Number(process.hrtime.bigint() - started) / 1e3 / OPS;
}
const now = new Date();
const costs = { open: [] as number[], openNoCache: [] as number[], sign: [] as number[] };
for (let r = 0; r < ROUNDS; r++) {
  costs.open.push(perOp((i) => cached.liveSecrets(subs[i % SUBSCRIPTIONS].id, subs[i % SUBSCRIPTIONS].stored, now)));
  costs.openNoCache.push(
    perOp((i) => uncached.liveSecrets(subs[i % SUBSCRIPTIONS].id, subs[i % SUBSCRIPTIONS].stored, now)),
  );
  costs.sign.push(
    perOp((i) =>
      signEnvelope(
        subs[i % SUBSCRIPTIONS].plain,
        { id: `d${i}`, eventId: 'e', event: 'asset.created', organizationId: 'o', data },
        { now },
      ),
    ),
  );
}
console.log(
  `\nPer delivery (median µs): opening the secrets ${median(costs.open).toFixed(1)} cached, ` +
    `${median(costs.openNoCache).toFixed(1)} without the cache; signing them ${median(costs.sign).toFixed(1)}`,
);
writeResults('secret-signing', {
  rounds: ROUNDS,
  opsPerRound: OPS,
  variants: variants.map((v) => ({
    name: v,
    signingsPerSecond: Math.round(median(results.get(v)!)),
    vsPlaintext: round(median(ratios.get(v)!), 2),
  })),
  perDeliveryUs: {
    openCached: round(median(costs.open), 1),
    openUncached: round(median(costs.openNoCache), 1),
    sign: round(median(costs.sign), 1),
  },
});
