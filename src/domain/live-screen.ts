import { detectSensitive, type Finding } from './sensitive/detector.js';

/** Characters before the release point that the detector sees again, for lookbehinds and patterns that start earlier. */
const CONTEXT = 2048;

/**
 * A word that no rule can start, extend or end in: letters (with inner hyphens and apostrophes)
 * and prose punctuation around them, or a lone Markdown marker. Anything else (a digit, `@`, `:`,
 * `=`, a quote, `+`, `/`, a leading `-`…) may be part of something sensitive that spans several
 * words (a phone number, an IBAN, `password = "…"`), so the rest of its line waits.
 */
const PLAIN_WORD = /^(?:[(\[*_`]*\p{L}[\p{L}\p{M}'’-]*[)\]*_`.,;!?]*|#{1,6}|[-*>|•–—])$/u;

/**
 * Screens a reply while it streams in, so that what is shown live is what the detector lets
 * through once the reply is complete: `push` each piece as it arrives and show what it returns;
 * `flush` when the reply is complete.
 *
 * Text is released word by word while a line holds only plain words (see PLAIN_WORD); from the
 * first other word, the rest of the line is released when the line ends (and, when the line ends
 * on such a word, once the next line's first word is complete). Everything released is redacted
 * as `redactSensitive` would redact it, judged on all the text received so far — so a finding is
 * always complete when any of it is released, and a private key's body that keeps streaming stays
 * under the one marker already shown.
 */
export class LiveScreen {
  #raw = '';
  /** Raw characters already released (in their screened form). */
  #released = 0;
  /** A finding whose marker is out and which reached the release point (it may still grow). */
  #open: Finding | undefined;

  /** Adds a piece of the reply; returns the screened text that may be shown now ('' for none). */
  push(delta: string): string {
    this.#raw += delta;
    return this.#release(releasePoint(this.#raw, this.#released));
  }

  /** The reply is complete: returns the rest, screened. */
  flush(): string {
    return this.#release(this.#raw.length);
  }

  /** Everything received so far, unscreened (to compare with the reply as kept, never to show). */
  get received(): string {
    return this.#raw;
  }

  #release(to: number): string {
    const from = this.#released;
    if (to <= from) return '';
    const windowStart = this.#open ? Math.min(this.#open.start, Math.max(0, from - CONTEXT)) : Math.max(0, from - CONTEXT);
    const findings = detectSensitive(this.#raw.slice(windowStart)).map((f) => ({ ...f, start: f.start + windowStart, end: f.end + windowStart }));
    let out = '';
    let pos = from;
    for (const f of findings) {
      if (f.end <= from || f.start >= to) continue;
      if (f.start >= pos) out += `${this.#raw.slice(pos, f.start)}${marker(f)}`;
      // A finding that reaches back into released text: its marker is out already when it is the open one.
      else if (!(this.#open && this.#open.start === f.start)) out += marker(f);
      pos = Math.max(pos, Math.min(f.end, to));
    }
    out += this.#raw.slice(pos, to);
    this.#open = findings.find((f) => f.start < to && f.end >= to);
    this.#released = to;
    return out;
  }
}

function marker(finding: Finding): string {
  return `[REDACTED:${finding.category}]`;
}

/** How far the text may be released now (never before `from`): see LiveScreen. */
function releasePoint(raw: string, from: number): number {
  let point = from;
  let held = false;
  let endsSuspicious = false;
  const token = /\s+|\S+/gy;
  token.lastIndex = from;
  for (let m = token.exec(raw); m; m = token.exec(raw)) {
    const end = m.index + m[0].length;
    if (/^\s/.test(m[0])) {
      if (m[0].includes('\n')) {
        // A line that ends on an unplain word may go on in the next line (`password =⏎ value`).
        if (held && !endsSuspicious) held = false;
      }
      if (!held) point = end;
      continue;
    }
    if (end === raw.length) break; // the last word may still grow
    const plain = PLAIN_WORD.test(m[0]);
    if (held && endsSuspicious && plain && lineBreakBefore(raw, m.index)) held = false;
    if (!plain) held = true;
    endsSuspicious = !plain;
    if (!held) point = end;
  }
  return point;
}

/** True when the whitespace just before `index` holds a line break. */
function lineBreakBefore(raw: string, index: number): boolean {
  for (let i = index - 1; i >= 0 && /\s/.test(raw[i] as string); i -= 1) if (raw[i] === '\n') return true;
  return false;
}
