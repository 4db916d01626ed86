/**
 * What one model step said, handed to the traces when a workspace opted in to message content
 * (`telemetry.capture_content`). The engine passes the texts as it keeps them (already screened
 * and redacted); the tracer redacts them again before they leave the process.
 */
export interface StepContent {
  readonly runId: string;
  /** The persona that spoke (`mediator` for the task's classification). */
  readonly persona: string;
  /** The user message the persona was sent for this step. */
  readonly prompt: string;
  /** The reply as kept (redacted on arrival). */
  readonly reply: string;
  /** The system prompt, when the caller wants it on the trace too. */
  readonly system?: string;
}

/**
 * Where the engine hands a step's content for tracing. Call it once per model step, right after that
 * step's `MODEL_CALL` audit record is written (before the run's step ends): the content goes on that
 * call's `chat` span. A no-op unless content capture is on; it never throws.
 */
export interface StepContentRecorder {
  recordStepContent(content: StepContent): void;
}
