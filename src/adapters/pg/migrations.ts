/**
 * The engine's schema, as numbered migrations applied in order by `maestro engine migrate` (each in
 * its own transaction, recorded in `maestro_migrations`). A migration is never edited once released:
 * a change is a new migration with the next number.
 */
export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'queue, runs, audit, sessions, loop policy, workers',
    sql: `
CREATE TABLE maestro_workers (
  session_id    text PRIMARY KEY,
  name          text NOT NULL,
  host          text NOT NULL,
  pid           integer NOT NULL,
  backend_pid   integer NOT NULL,
  backend_start timestamptz NOT NULL,
  started_at    timestamptz NOT NULL DEFAULT now(),
  last_seen     timestamptz NOT NULL DEFAULT now(),
  current_run   text,
  stopped_at    timestamptz
);

CREATE TABLE maestro_queue (
  run_id        text PRIMARY KEY,
  seq           bigserial NOT NULL UNIQUE,
  workspace_id  text NOT NULL,
  source        text NOT NULL,
  body          text NOT NULL,
  input_hashes  jsonb NOT NULL DEFAULT '{}'::jsonb,
  kind          text NOT NULL DEFAULT 'command' CHECK (kind IN ('command', 'decision')),
  state         text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'running', 'paused', 'done', 'rejected')),
  recovered     boolean NOT NULL DEFAULT false,
  owner         text,
  epoch         integer NOT NULL DEFAULT 0,
  claims        integer NOT NULL DEFAULT 0,
  stalls        integer NOT NULL DEFAULT 0,
  failures      jsonb NOT NULL DEFAULT '[]'::jsonb,
  rejection     jsonb,
  enqueued_at   timestamptz NOT NULL DEFAULT now(),
  claimed_at    timestamptz,
  finished_at   timestamptz,
  delivered_at  timestamptz
);
CREATE INDEX maestro_queue_ready ON maestro_queue (seq) WHERE state = 'queued';
CREATE INDEX maestro_queue_running ON maestro_queue (owner) WHERE state = 'running';
CREATE INDEX maestro_queue_undelivered ON maestro_queue (workspace_id, seq) WHERE delivered_at IS NULL AND state IN ('paused', 'done', 'rejected');

CREATE TABLE maestro_runs (
  run_id      text PRIMARY KEY,
  status      text NOT NULL,
  state       jsonb NOT NULL,
  updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE maestro_run_files (
  run_id      text NOT NULL,
  name        text NOT NULL,
  content     text NOT NULL,
  written_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (run_id, name)
);

CREATE TABLE maestro_artifacts (
  run_id      text NOT NULL,
  path        text NOT NULL,
  content     text NOT NULL,
  protect     jsonb NOT NULL DEFAULT '[]'::jsonb,
  written_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (run_id, path)
);

CREATE TABLE maestro_audit (
  run_id      text NOT NULL,
  seq         integer NOT NULL,
  line        text NOT NULL,
  written_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (run_id, seq)
);

CREATE TABLE maestro_audit_heads (
  run_id      text PRIMARY KEY,
  head        text NOT NULL,
  written_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE maestro_sessions (
  persona_id  text PRIMARY KEY,
  state       jsonb NOT NULL,
  version     bigint NOT NULL DEFAULT 1,
  updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE maestro_session_archive (
  id          bigserial PRIMARY KEY,
  persona_id  text NOT NULL,
  message     jsonb NOT NULL,
  archived_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE maestro_loop_policy (
  id          smallint PRIMARY KEY CHECK (id = 1),
  data        jsonb NOT NULL,
  version     bigint NOT NULL DEFAULT 1,
  updated_at  timestamptz NOT NULL DEFAULT now()
);
`,
  },
  {
    version: 2,
    name: "the intake workspace's floor acceptances, carried with each command",
    // NULL: a row from before this column; a worker then applies no acceptance (fail closed).
    sql: 'ALTER TABLE maestro_queue ADD COLUMN floor_accept jsonb;',
  },
];

/** Every table the migrations create: an engine without one of them is not ready, whatever its version says. */
export const SCHEMA_TABLES = [
  'maestro_workers',
  'maestro_queue',
  'maestro_runs',
  'maestro_run_files',
  'maestro_artifacts',
  'maestro_audit',
  'maestro_audit_heads',
  'maestro_sessions',
  'maestro_session_archive',
  'maestro_loop_policy',
] as const;

/** The newest schema version this build of maestro needs. */
export const SCHEMA_VERSION = MIGRATIONS.reduce((max, m) => Math.max(max, m.version), 0);
