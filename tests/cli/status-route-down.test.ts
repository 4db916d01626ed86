import { describe, expect, it } from 'vitest';
import type { WorkspaceStatus } from '../../src/adapters/fs/workspace-status.js';
import { formatStatus } from '../../src/cli/status.js';
import type { RouteOutage } from '../../src/compose/route-breaker.js';

// QA: "3 queued command(s), 2 run(s) paused by its outage (o1.json, o2.json, o3.json)" put the queued
// commands' names where they read as the paused runs'. Each count now names its own.
const paused = (run_id: string, source: string, outage_route: string | null) => ({
  run_id,
  source,
  layer: 'model',
  reason_code: 'MODEL_UNREACHABLE',
  message: 'route down',
  requested_at: null,
  outage_route,
});

const status = {
  workspace: '/ws',
  watchers: [],
  queued: ['o1.json', 'o2.json', 'o3.json'].map((file) => ({ file })),
  inflight: [],
  interrupted: [],
  continued: [],
  paused: [paused('R1', 'p1.json', 'lab'), paused('R2', 'p2.json', 'lab'), paused('R3', 'p3.json', null)],
  recent: [],
  rejected: 0,
  unreadable_checkpoints: [],
} as unknown as WorkspaceStatus;

const down: RouteOutage = {
  route: 'lab',
  watcher_pid: 4242,
  since: '2026-01-01T00:00:00Z',
  failure: 'network',
  message: 'route "lab" does not answer',
  probes: 2,
  next_probe_at: '2026-01-01T00:01:00Z',
  queued: ['o1.json', 'o2.json', 'o3.json'],
};

describe('maestro status: what waits for a route that is down', () => {
  it('names the queued commands after their count and the paused runs after theirs', () => {
    const text = formatStatus({ ...status, routes_down: [down] }, {
      stdout: process.stdout,
      stderr: process.stderr,
      env: { NO_COLOR: '1' },
      cwd: '/ws',
    } as never);
    const line = text.split('\n').find((l) => l.includes('waiting for it'));
    expect(line?.trim()).toBe(
      'waiting for it: 3 queued command(s): o1.json, o2.json, o3.json; 2 run(s) paused by its outage: R1 (p1.json), R2 (p2.json)',
    );
  });
});
