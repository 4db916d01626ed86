import { explainReason } from './codes.js';
import type { PauseRecord } from './run-state.js';

/** That a run waits for a person: what a notification may say (codes and times, never the task, a note or a name). */
export interface PauseNotice {
  readonly runId: string;
  readonly pause: Pick<PauseRecord, 'pause_id' | 'layer' | 'reason_code' | 'requested_at'>;
  /** outage | setup | judgement: what kind of pause it is (an outage resumes on its own when its route answers). */
  readonly pauseClass: string;
}

/** A run paused for a person as `maestro status` lists it, on files or from the engine. */
export interface PausedRunRow {
  run_id: string;
  source: string;
  layer: string | null;
  reason_code: string | null;
  message: string;
  requested_at: string | null;
}

/** Tells people that a run waits for one (a webhook). Never holds up or fails the run: delivery happens beside it. */
export interface PauseNotifier {
  paused(notice: PauseNotice): void;
  /** Resolves when every delivery begun has ended, or after `graceMs`, when those still going are given up (and recorded so). */
  settled(graceMs: number): Promise<void>;
}

/**
 * The message a webhook receives for a pause: maestro's own JSON, or Slack's `{"text": …}` (which
 * Mattermost and Teams workflows also take). Built only from codes, times and the console's
 * address: the detector's categories need no screening here because no text of the run is in it.
 */
export function pauseMessage(notice: PauseNotice, options: { format: 'json' | 'slack'; consoleUrl: string | undefined }): unknown {
  const link = options.consoleUrl ? new URL(`runs/${encodeURIComponent(notice.runId)}`, withSlash(options.consoleUrl)).href : null;
  const reason = explainReason(notice.pause.reason_code);
  if (options.format === 'slack') {
    const where = link ? ` <${link}|Decide in the console>` : ' Decide with `maestro hitl decide`.';
    return { text: `maestro: run ${notice.runId} waits for a person — ${notice.pause.reason_code}: ${reason}.${where}` };
  }
  return {
    event: 'run_paused',
    run_id: notice.runId,
    pause_id: notice.pause.pause_id,
    layer: notice.pause.layer,
    reason_code: notice.pause.reason_code,
    reason,
    pause_class: notice.pauseClass,
    paused_at: notice.pause.requested_at,
    link,
  };
}

function withSlash(url: string): string {
  return url.endsWith('/') ? url : `${url}/`;
}
