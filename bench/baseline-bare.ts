// Baseline 1: bare Fastify answering {ok:true}; the ceiling for any authenticated endpoint.
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/ok', async () => ({ ok: true }));
await app.listen({ port: Number(process.argv[2]), host: '127.0.0.1' });
process.send?.('ready');
