#!/usr/bin/env node
import { main } from '../dist/bundle/main.js';

// Output piped into a reader that stops early (`maestro --help | head`) is not an error of its own: what
// is left to say is dropped, and the subcommand hears of it (a run stops at its checkpoint, interrupted).
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error) => {
    if (error.code === 'EPIPE' || error.code === 'ERR_STREAM_DESTROYED') return;
    throw error;
  });
}

main(process.argv).then((code) => {
  process.exitCode = code;
});
