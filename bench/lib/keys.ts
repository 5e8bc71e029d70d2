// SECRETS_ENCRYPTION_KEYS for the servers and engines the benchmarks start on PostgreSQL (required there since
// webhook secrets are encrypted at rest). A fixed key: bench databases are scratch data, and a database seeded
// once and reused across runs (the scale bench's) must open with the same key every time.
export const BENCH_SECRETS_KEYS = 'bench:YmVuY2gtb25seS1rZXksIG5vdC1hLXNlY3JldCAzMmI=';
