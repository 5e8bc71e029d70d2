// The production entry. Node.js 22.1+ keeps the compiled code of every module between starts (in
// NODE_COMPILE_CACHE, else a directory under the system's temporary directory): it is switched on here, before
// anything else is loaded, so the server's own modules and its dependencies start from the cache. Node.js 20 has
// no compile cache; there this does nothing. A cache that cannot be written costs nothing but the saving.
import module from 'node:module';
import { keepTickObjectShape } from './core/tick-shape.ts';

(module as { enableCompileCache?: () => unknown }).enableCompileCache?.();
// Before anything schedules work: see tick-shape.ts (a full collection at start-up could otherwise slow every
// request of this process).
keepTickObjectShape();
await import('./server.ts');
