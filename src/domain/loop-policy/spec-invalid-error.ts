import { AppError } from '../errors.js';

/**
 * The loop policy was configured in a way the Stage 3 contract forbids (the reference's
 * `ValueError("SPEC_INVALID: …")`). Thrown at construction, before any event is processed.
 */
export class SpecInvalidError extends AppError {
  readonly code = 'SPEC_INVALID' as const;
}
