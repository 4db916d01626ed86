import { describe, expect, it } from 'vitest';
import { decodeBase64Url, IBAN_LENGTHS, isIbanValid, isLuhnValid } from '../../../src/domain/sensitive/checksums.js';

describe('isLuhnValid: a card-shaped number counts only when its check digit is right', () => {
  it.each([
    ['4111111111111111', true],
    ['5500005555555559', true],
    ['79927398713', true],
    ['4111111111111112', false],
    ['79927398710', false],
    ['1234567812345678', false],
  ])('%s → %s', (digits, valid) => {
    expect(isLuhnValid(digits)).toBe(valid);
  });

  it('takes digits only: separators, letters and an empty string are not a number', () => {
    expect(isLuhnValid('4111 1111 1111 1111')).toBe(false);
    expect(isLuhnValid('4111-1111-1111-1111')).toBe(false);
    expect(isLuhnValid('41111111111111a1')).toBe(false);
    expect(isLuhnValid('')).toBe(false);
  });

  it('catches every single-digit typo of a valid number', () => {
    const valid = '4539578763621486';
    expect(isLuhnValid(valid)).toBe(true);
    for (let i = 0; i < valid.length; i++) {
      const digit = Number(valid[i]);
      const typo = `${valid.slice(0, i)}${(digit + 1) % 10}${valid.slice(i + 1)}`;
      expect(isLuhnValid(typo), typo).toBe(false);
    }
  });
});

describe('isIbanValid: the registered length of its country and the mod-97 check', () => {
  it.each(['DE89370400440532013000', 'GB82WEST12345698765432', 'FR1420041010050500013M02606', 'NL91ABNA0417164300', 'NO9386011117947'])(
    '%s is an IBAN',
    (iban) => {
      expect(isIbanValid(iban)).toBe(true);
    },
  );

  it.each([
    ['DE88370400440532013000', 'wrong check digits'],
    ['DE8937040044053201300', 'one character short of the German length'],
    ['DE893704004405320130000', 'one character too long'],
    ['XX89370400440532013000', 'a country without IBANs'],
    ['de89370400440532013000', 'lower case (callers pass it compacted and upper-cased)'],
    ['DE89 3704 0044 0532 0130 00', 'with spaces'],
    ['GB82WEST12345698765433', 'a changed account digit'],
  ])('%s is not (%s)', (iban) => {
    expect(isIbanValid(iban)).toBe(false);
  });

  it('knows the registry length of the countries it lists', () => {
    expect(IBAN_LENGTHS).toMatchObject({ DE: 22, GB: 22, FR: 27, NO: 15, MT: 31, LC: 32 });
  });
});

describe('decodeBase64Url: enough to read a JWT header', () => {
  it('decodes unpadded base64url', () => {
    expect(decodeBase64Url('eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9')).toBe('{"alg":"HS256","typ":"JWT"}');
    expect(decodeBase64Url('TWE')).toBe('Ma');
    expect(decodeBase64Url('')).toBe('');
  });

  it('reads the url-safe alphabet (- and _), where standard base64 has + and /', () => {
    expect(decodeBase64Url('-_8')).toBe('\xfb\xff');
    expect(decodeBase64Url('+/8')).toBeUndefined();
  });

  it('refuses what is not base64url: padding, other characters, an impossible length', () => {
    expect(decodeBase64Url('TWE=')).toBeUndefined();
    expect(decodeBase64Url('ab c')).toBeUndefined();
    expect(decodeBase64Url('abcde')).toBeUndefined();
  });
});
