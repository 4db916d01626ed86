import { describe, expect, it } from 'vitest';
import { formatIssues } from '../../src/domain/issues.js';
import { isLocalUrl, resolveRoute, Route, type ResolvedRoute } from '../../src/domain/route.js';

const route = (over: Record<string, unknown> = {}): Route => Route.parse({ provider: 'openai', model: 'gpt-4o-mini', ...over });
const resolved = (r: ReturnType<typeof resolveRoute>): ResolvedRoute => {
  if ('error' in r) throw new Error(r.error);
  return r;
};

describe('isLocalUrl: only a loopback host keeps data on this machine', () => {
  it.each(['http://localhost:11434/v1', 'http://LOCALHOST:8080', 'http://127.0.0.1:8080/v1', 'https://127.4.5.6', 'http://[::1]:8000/v1'])(
    '%s is local',
    (url) => {
      expect(isLocalUrl(url)).toBe(true);
    },
  );

  it.each([
    'https://api.openai.com/v1',
    'http://127.0.0.1.nip.io/v1',
    'http://localhost.example.com',
    'http://10.0.0.5:8080',
    'http://0.0.0.0:8080',
    'http://192.168.1.10',
    'not a url',
    '',
  ])('%s is not', (url) => {
    expect(isLocalUrl(url)).toBe(false);
  });

  it('an absent base URL means the provider default, which is remote', () => {
    expect(isLocalUrl(undefined)).toBe(false);
  });
});

describe('resolveRoute: a route ready to use, its locality settled', () => {
  it('the offline model is local, whatever else the route says', () => {
    const offline = resolved(
      resolveRoute('offline', Route.parse({ provider: 'offline', model: 'offline-rehearsal-v1' }), {
        OPENAI_BASE_URL: 'https://api.openai.com',
      }),
    );
    expect(offline).toMatchObject({ id: 'offline', locality: 'local' });
  });

  it('infers the locality from the endpoint', () => {
    expect(resolved(resolveRoute('ollama', route({ base_url: 'http://127.0.0.1:11434/v1' }), {})).locality).toBe('local');
    expect(resolved(resolveRoute('cloud', route({ base_url: 'https://api.openai.com/v1' }), {})).locality).toBe('remote');
    expect(resolved(resolveRoute('default', route(), {}))).toMatchObject({ id: 'default', locality: 'remote' });
  });

  it('takes the endpoint from OPENAI_BASE_URL when the route names none, and its own base_url over it', () => {
    const fromEnv = resolved(resolveRoute('main', route(), { OPENAI_BASE_URL: 'http://localhost:8080/v1' }));
    expect(fromEnv).toMatchObject({ base_url: 'http://localhost:8080/v1', locality: 'local' });
    const own = resolved(
      resolveRoute('main', route({ base_url: 'https://api.example.com/v1' }), { OPENAI_BASE_URL: 'http://localhost:8080/v1' }),
    );
    expect(own).toMatchObject({ base_url: 'https://api.example.com/v1', locality: 'remote' });
    expect('base_url' in resolved(resolveRoute('main', route(), {}))).toBe(false);
  });

  it('refuses a route that claims to be local but is not on loopback', () => {
    const claimed = resolveRoute('private', route({ base_url: 'https://llm.internal.example.com/v1', locality: 'local' }), {});
    expect(claimed).toEqual({
      error: 'route "private" says locality "local" but its endpoint (https://llm.internal.example.com/v1) is not on loopback',
    });
    expect(resolveRoute('private', route({ locality: 'local' }), {})).toEqual({
      error: expect.stringContaining('(the OpenAI default) is not on loopback'),
    });
  });

  it('keeps a stated remote locality even on loopback (the cautious claim stands)', () => {
    expect(resolved(resolveRoute('tunnel', route({ base_url: 'http://127.0.0.1:9000', locality: 'remote' }), {})).locality).toBe('remote');
  });

  it('refuses an endpoint that is not http or https, and says where it came from', () => {
    const socket = resolveRoute('sock', route({ base_url: 'unix:///var/run/llm.sock' }), {});
    expect(socket).toEqual({
      error: expect.stringMatching(
        /^route "sock": its base_url \(unix:\/\/\/var\/run\/llm\.sock\) is not an http:\/\/ or https:\/\/ address/,
      ),
    });
    expect(resolveRoute('env', route(), { OPENAI_BASE_URL: 'ftp://files.example.com' })).toEqual({
      error: expect.stringContaining('OPENAI_BASE_URL (ftp://files.example.com)'),
    });
    expect(resolveRoute('env', route(), { OPENAI_BASE_URL: 'localhost:8080' })).toHaveProperty('error');
  });
});

describe('Route: what maestro.config.json may say about a route', () => {
  it('fills in the defaults', () => {
    expect(route()).toEqual({
      provider: 'openai',
      model: 'gpt-4o-mini',
      timeout_ms: 60_000,
      max_retries: 2,
      privileges: ['READ_FILE', 'QUERY_CORTEX'],
      json_mode: 'json_schema',
      stream: false,
    });
  });

  it('reads the older json_mode name response_format as json_object', () => {
    expect(route({ json_mode: 'response_format' }).json_mode).toBe('json_object');
  });

  it.each([
    ['a key where the variable name belongs', { api_key_env: 'sk-proj-abc123-def' }, 'must be the NAME of an environment variable'],
    ['an unknown provider', { provider: 'anthropic' }, 'provider'],
    ['a blank model', { model: '   ' }, 'model'],
    ['a temperature over 2', { temperature: 2.5 }, 'temperature'],
    ['a timeout under 100 ms', { timeout_ms: 50 }, 'timeout_ms'],
    ['more than 10 retries', { max_retries: 11 }, 'max_retries'],
    ['an unknown key', { api_key: 'sk-123' }, 'api_key'],
    ['a header name with a space', { api_key_header: 'api key' }, 'an HTTP header name'],
    [
      'a query parameter name with a space',
      { default_query: { 'api version': '1' } },
      'default_query.api version: not a valid key (a query parameter name)',
    ],
  ])('refuses %s', (_what, change, said) => {
    const parsed = Route.safeParse({ provider: 'openai', model: 'gpt-4o-mini', ...change });
    expect(parsed.success).toBe(false);
    expect(parsed.error ? formatIssues(parsed.error).join('\n') : '').toContain(said);
  });
});
