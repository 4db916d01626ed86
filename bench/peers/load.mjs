// Loaded by bench/peers.bench.mjs: bare imports here resolve to bench/peers/node_modules, never to maestro's.
export const load = (name) => import(name);
