import type { Sha256 } from '../../domain/audit-chain.js';
import type { Clock } from '../../domain/ports.js';
import type { AuditLog } from '../fs/audit-sink.js';
import type { StepContentRecorder } from '../../domain/telemetry.js';
import type { WorkspaceConfig } from '../../domain/workspace-config.js';

/** What the telemetry loader (telemetry.ts) and the OpenTelemetry adapter it loads on demand share. */

/** Traces for one process (`maestro run`, a watcher): the audit log made to feed them, and their end. */
export interface Telemetry extends StepContentRecorder {
  /** Where traces go; undefined when tracing is off. */
  readonly endpoint?: string;
  /** The audit log, also turning every record it writes into spans (the log itself when tracing is off). */
  wrapAuditLog(log: AuditLog): AuditLog;
  /** Ends the open spans and sends what is buffered. Call once, when the process is done with runs. */
  shutdown(): Promise<void>;
}

/** Where and how traces are sent, resolved from the workspace config and the standard OTEL_* variables. */
export interface TelemetrySettings {
  /** The OTLP/HTTP traces URL (`…/v1/traces`). */
  readonly tracesUrl: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly serviceName: string;
  readonly captureContent: boolean;
}

type Env = Readonly<Record<string, string | undefined>>;

export interface TelemetryDeps {
  readonly config: WorkspaceConfig;
  readonly env: Env;
  readonly clock: Clock;
  readonly sha256: Sha256;
  readonly serviceVersion: string;
  /** Said once when traces cannot be sent (or a record cannot be traced); runs are never failed by tracing. */
  readonly onNotice: (message: string) => void;
}
