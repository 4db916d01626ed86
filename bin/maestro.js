#!/usr/bin/env node
import { main } from '../dist/bundle/main.js';

// Output piped into a reader that stops early (`maestro --help | head`) is not an error.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
}

main(process.argv).then((code) => {
  process.exitCode = code;
});
