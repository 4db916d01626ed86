import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

type Counter = (text: string) => number;
let counter: Counter | undefined;

/**
 * Tokens of a text in the o200k encoding (GPT-4o family), used to bound persona histories. The
 * encoding's table is large, so it is loaded on the first count, not at start-up: a run with no
 * history to bound never loads it. Stored turns keep their count in the session file, so each is
 * counted once.
 */
export function countTokens(text: string): number {
  counter ??= loadCounter();
  return counter(text);
}

/**
 * gpt-tokenizer's o200k encoding, built from the table it ships as data (`o200k_base.tiktoken`: each
 * token's bytes in base64 and its rank) rather than from its JavaScript module: the same ranks, about
 * 20 MiB less memory at the peak of loading (a 2.4 MB array literal costs more to compile than to read).
 * Falls back to the module if the data file cannot be read.
 */
function loadCounter(): Counter {
  const require = createRequire(import.meta.url);
  try {
    const ranks = readTiktokenRanks(require.resolve('gpt-tokenizer/data/o200k_base.tiktoken'));
    const { GptEncoding } = require('gpt-tokenizer/cjs/GptEncoding') as {
      GptEncoding: { getEncodingApi(name: string, ranks: () => (string | number[])[]): { countTokens: Counter } };
    };
    return GptEncoding.getEncodingApi('o200k_base', () => ranks).countTokens;
  } catch {
    return (require('gpt-tokenizer/encoding/o200k_base') as { countTokens: Counter }).countTokens;
  }
}

const BASE64 = (() => {
  const table = new Int16Array(128).fill(-1);
  for (const [i, c] of [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'].entries()) table[c.charCodeAt(0)] = i;
  return table;
})();

/**
 * The ranks of a `.tiktoken` file as gpt-tokenizer wants them: index = rank, value = the token as a
 * string when its bytes are valid UTF-8, else its bytes. Decoded in one pass over the file's bytes.
 */
export function readTiktokenRanks(file: string): (string | number[])[] {
  const data = readFileSync(file);
  const ranks: (string | number[])[] = [];
  const bytes = new Uint8Array(1024);
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  let i = 0;
  while (i < data.length) {
    let n = 0;
    let acc = 0;
    let bits = 0;
    for (; i < data.length && data[i] !== 0x20; i++) {
      const c = data[i] as number;
      if (c === 0x3d) continue; // '=' padding
      const v = c < 128 ? (BASE64[c] as number) : -1;
      if (v < 0 || n >= bytes.length) throw new Error(`not a .tiktoken file: ${file}`);
      acc = ((acc << 6) | v) & 0xffffff;
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        bytes[n++] = (acc >> bits) & 0xff;
      }
    }
    i++;
    let rank = 0;
    let digits = 0;
    for (; i < data.length && data[i] !== 0x0a; i++, digits++) rank = rank * 10 + ((data[i] as number) - 48);
    i++;
    if (digits === 0 || n === 0) throw new Error(`not a .tiktoken file: ${file}`);
    const token = bytes.subarray(0, n);
    // A string when the bytes are UTF-8 that decodes and encodes back to themselves (a leading BOM
    // does not), else the bytes: exactly how gpt-tokenizer's own table holds them.
    let value: string | number[];
    try {
      value = utf8.decode(token);
      if (Buffer.byteLength(value) !== n) value = Array.from(token);
    } catch {
      value = Array.from(token);
    }
    ranks[rank] = value;
  }
  return ranks;
}
