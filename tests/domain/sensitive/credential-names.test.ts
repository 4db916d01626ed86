import { describe, expect, it } from 'vitest';
import {
  CREDENTIAL_WORDS,
  credentialName,
  KEY_QUALIFIERS,
  NOT_SECRET_QUALIFIERS,
  VALUE_SUFFIXES,
} from '../../../src/domain/sensitive/credential-names.js';

// Issue 22 item 11: a key names a credential by its words, in any case and spelling.

describe('credentialName', () => {
  it.each(CREDENTIAL_WORDS.map((w) => [w] as const))('%s names a credential, in any case, alone, qualified and glued', (word) => {
    const camel = `db${word.charAt(0).toUpperCase()}${word.slice(1)}`;
    for (const key of [word, word.toUpperCase(), `DB_${word.toUpperCase()}`, `db.${word}`, `db-${word}`, camel, `--${word}`, `${word}2`]) {
      expect(credentialName(key), key).toBe('names');
    }
  });

  it('reads mixed and odd case (Pwd, pAsSwOrD, PaSsWd)', () => {
    for (const key of ['Pwd', 'pAsSwOrD', 'PaSsWd', 'sEcReT', 'ToKeN', 'ApiKey', 'CLIENT_secret'])
      expect(credentialName(key), key).toBe('names');
  });

  it.each([...KEY_QUALIFIERS].map((q) => [q] as const))('%s + key names a credential in every spelling', (qualifier) => {
    const Q = qualifier.charAt(0).toUpperCase() + qualifier.slice(1);
    for (const key of [
      `${qualifier}_key`,
      `${qualifier.toUpperCase()}_KEY`,
      `${qualifier}Key`,
      `${Q}Key`,
      `${qualifier}-key`,
      `${qualifier} key`,
      `x-${qualifier}-key`,
    ]) {
      expect(credentialName(key), key).toBe('names');
    }
  });

  it('a key that is no credential key is neither', () => {
    for (const key of [
      'key',
      'primary_key',
      'public_key',
      'publicKey',
      'sort-key',
      'keyboard',
      'monkey',
      'author',
      'bypass',
      'compass',
      'passenger',
      'passport',
      'pwa_manifest',
      'session_id',
      'user',
      '',
    ]) {
      expect(credentialName(key), key).toBeUndefined();
    }
  });

  it.each([...VALUE_SUFFIXES].map((s) => [s] as const))('a value word after the credential word (%s) still names it', (suffix) => {
    for (const key of [
      `password_${suffix}`,
      `TOKEN_${suffix.toUpperCase()}`,
      `secret${suffix.charAt(0).toUpperCase()}${suffix.slice(1)}`,
    ]) {
      expect(credentialName(key), key).toBe('names');
    }
  });

  it.each([...NOT_SECRET_QUALIFIERS].map((q) => [q] as const))(
    '%s before the credential word makes the key only mention one',
    (qualifier) => {
      const Q = qualifier.charAt(0).toUpperCase() + qualifier.slice(1);
      for (const key of [
        `${qualifier}_token`,
        `${qualifier}-token`,
        `${qualifier}Token`,
        `${Q}Token`,
        `x-${qualifier}-token`,
        `${qualifier}_password`,
      ]) {
        expect(credentialName(key), key).toBe('mentions');
      }
    },
  );

  it('a key about a credential, not holding one, only mentions it', () => {
    for (const key of [
      'csrf-token',
      'publicToken',
      'max_tokens',
      'token_type',
      'token_url',
      'tokenizer',
      'password_policy',
      'passwordHash',
      'secret_name',
      'auth',
      'AUTH',
      'authMode',
      'pw_min_length',
      'AWS_ACCESS_KEY_ID',
      // An OpenID ID token is an identity assertion, a JWT the JWT rule finds by its shape (`id-token: write` is a permission).
      'id_token',
      'id-token',
      'credentialsId',
      'secretName',
      'secretKeyRef',
      'passwordVariable',
    ]) {
      expect(credentialName(key), key).toBe('mentions');
    }
  });

  it('names what real configurations call their secrets', () => {
    const keys = [
      'GITHUB_API_KEY',
      'snowflake.password',
      'PGPASSWORD',
      'MYSQL_PWD',
      'aws_secret_access_key',
      'SecretAccessKey',
      'client_secret',
      'clientSecret',
      'x-api-key',
      'X-Auth-Token',
      'oauth_token_secret',
      'secret_key_base',
      'password_confirmation',
      'tokenValue',
      'DB_PASS',
      'dbPass',
      'db_pw',
      'credentials',
      'API Key',
    ];
    for (const key of keys) expect(credentialName(key), key).toBe('names');
  });
});
