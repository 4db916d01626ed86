/**
 * Checksums and decoders used to confirm a pattern match before it counts as a finding.
 * All pure string arithmetic, no allocation beyond small strings.
 */
import { VOCABULARY } from './vocabulary.js';

/** True when `digits` (ASCII digits only, no separators) passes the Luhn mod-10 check. */
export function isLuhnValid(digits: string): boolean {
  if (!/^\d+$/.test(digits)) return false;
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

/**
 * IBAN length per ISO 3166 country code, from the SWIFT IBAN registry (`vocabulary.json`). A
 * candidate whose country is not listed is not an IBAN, which keeps random "AB12..." tokens out.
 */
export const IBAN_LENGTHS: Readonly<Record<string, number>> = VOCABULARY.iban_lengths.lengths;

/**
 * True when `iban` (compact: no spaces, upper case) has its country's registered length and
 * passes the ISO 13616 mod-97 check (rearranged number mod 97 === 1).
 */
export function isIbanValid(iban: string): boolean {
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]+$/.test(iban)) return false;
  if (IBAN_LENGTHS[iban.slice(0, 2)] !== iban.length) return false;
  const rearranged = iban.slice(4) + iban.slice(0, 4);
  let remainder = 0;
  for (let i = 0; i < rearranged.length; i++) {
    const code = rearranged.charCodeAt(i);
    // Letters expand to two digits (A=10 … Z=35); digits are themselves.
    const value = code >= 65 ? code - 55 : code - 48;
    remainder = value >= 10 ? (remainder * 100 + value) % 97 : (remainder * 10 + value) % 97;
  }
  return remainder === 1;
}

const BASE64URL_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const BASE64_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** Decodes unpadded text in `alphabet` into a string of byte values (Latin-1), or undefined when it is not in it. */
function decodeBase64With(alphabet: string, input: string): string | undefined {
  if (input.length % 4 === 1) return undefined;
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (let i = 0; i < input.length; i++) {
    const value = alphabet.indexOf(input.charAt(i));
    if (value < 0) return undefined;
    buffer = ((buffer << 6) | value) & 0xffffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += String.fromCharCode((buffer >> bits) & 0xff);
    }
  }
  return out;
}

/**
 * Decodes unpadded base64url into a string of byte values (Latin-1), or undefined when the input
 * is not base64url. Enough to look at a JWT header, which is ASCII JSON.
 */
export function decodeBase64Url(input: string): string | undefined {
  return decodeBase64With(BASE64URL_ALPHABET, input);
}

/** Decodes base64 (`+/`, padding optional) into a string of byte values (Latin-1), or undefined when it is not base64. */
export function decodeBase64(input: string): string | undefined {
  return decodeBase64With(BASE64_ALPHABET, input.replace(/={1,2}$/, ''));
}
