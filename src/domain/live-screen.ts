import { detectSensitive, type Finding } from './sensitive/detector.js';

/**
 * Characters before the release point that the detector sees again: lookbehinds, and a finding that
 * would reach back into released text (longer than any one-line pattern: a quoted value is ≤ 200).
 */
const CONTEXT = 512;

/**
 * A word that no rule can start, extend or end in: letters (with inner hyphens and apostrophes)
 * and prose punctuation around them, or a lone Markdown marker. Anything else (a digit, `@`, `:`,
 * `=`, a quote, `+`, `/`, a leading `-`…) may be part of something sensitive that spans several
 * words (a phone number, an IBAN, `password = "…"`), so the rest of its line waits.
 */
const PLAIN_WORD = /^(?:[([*_`]*\p{L}[\p{L}\p{M}'’-]*[)\]*_`.,;!?]*|#{1,6}|[-*>|•–—])$/u;

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
  readonly #scan = new ReleaseScan();

  /** Adds a piece of the reply; returns the screened text that may be shown now ('' for none). */
  push(delta: string): string {
    this.#raw += delta;
    return this.#release(this.#scan.advance(this.#raw));
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
    const findings = detectSensitive(this.#raw.slice(windowStart)).map((f) => ({
      ...f,
      start: f.start + windowStart,
      end: f.end + windowStart,
    }));
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

/**
 * Where the text may be released up to, kept as the reply grows (the text only ever grows, so each
 * piece is scanned once): complete tokens move the state on; the last token, which may still grow,
 * is only looked at.
 */
class ReleaseScan {
  /** Where the next token starts. */
  #pos = 0;
  /** A word that is not plain was seen in this line (or ended the line before): release waits. */
  #held = false;
  /** The last complete word was not plain. */
  #endsSuspicious = false;
  #point = 0;

  /** How far `raw` may be released now. */
  advance(raw: string): number {
    const token = /\s+|\S+/gy;
    token.lastIndex = this.#pos;
    for (let m = token.exec(raw); m; m = token.exec(raw)) {
      const end = m.index + m[0].length;
      const space = /^\s/.test(m[0]);
      if (end === raw.length) {
        // The last token may still grow: a word is not judged yet; white space may be released.
        return space && !this.#heldAfter(m[0]) ? end : this.#point;
      }
      if (space) this.#held = this.#heldAfter(m[0]);
      else this.#word(m[0], raw, m.index);
      if (!this.#held) this.#point = end;
      this.#pos = end;
    }
    return this.#point;
  }

  /** Whether release still waits after this white space: a line break ends the wait, unless the line ended on an unplain word. */
  #heldAfter(space: string): boolean {
    return this.#held && !(space.includes('\n') && !this.#endsSuspicious);
  }

  #word(word: string, raw: string, index: number): void {
    const plain = PLAIN_WORD.test(word);
    // A line that ended on an unplain word may go on in this one (`password =⏎ value`): a plain first word settles it.
    if (this.#held && this.#endsSuspicious && plain && lineBreakBefore(raw, index)) this.#held = false;
    if (!plain) this.#held = true;
    this.#endsSuspicious = !plain;
  }
}

/** True when the white space just before `index` holds a line break. */
function lineBreakBefore(raw: string, index: number): boolean {
  for (let i = index - 1; i >= 0 && /\s/.test(raw[i] as string); i -= 1) if (raw[i] === '\n') return true;
  return false;
}
