/**
 * Cheap searches that spare the detector's patterns most of the text.
 *
 * Where a match can begin: a rule's regex stays the one definition of what it matches, and a
 * `starts` function only narrows where the detector tries it. It must return every offset where
 * the pattern can match (an extra offset costs one failed attempt; a missing one would be a missed
 * finding). Most slow patterns share a shape: a lookbehind that forbids a character class, then a
 * bounded run of that class, then a literal that is cheap to find (`@`, `://`, `:`), so a match can
 * only begin where such a run begins, right before an occurrence of the literal.
 */

/** A membership test for an ASCII character class written as a one-character regex, e.g. /[A-Za-z0-9._%+-]/. */
export function asciiClass(oneCharacter: RegExp): (code: number) => boolean {
  const table = new Uint8Array(128);
  for (let code = 0; code < 128; code++) table[code] = oneCharacter.test(String.fromCharCode(code)) ? 1 : 0;
  return (code) => table[code] === 1;
}

/**
 * A membership test on code points for a character class that may hold non-ASCII characters,
 * written as a one-character `u` regex, e.g. /[\p{L}\p{N}._%+-]/u; ASCII answers come from a table.
 */
export function unicodeClass(oneCharacter: RegExp): (codePoint: number) => boolean {
  const ascii = asciiClass(oneCharacter);
  return (codePoint) => (codePoint < 128 ? ascii(codePoint) : oneCharacter.test(String.fromCodePoint(codePoint)));
}

/**
 * Offset where the run of `inRun` characters ending just before `end` begins (`end` itself when
 * the run is empty), or -1 when the run is longer than `maxLength`: no match can begin there.
 */
export function runStartBefore(text: string, end: number, inRun: (code: number) => boolean, maxLength: number): number {
  let start = end;
  while (start > 0 && inRun(text.charCodeAt(start - 1))) {
    if (end - start === maxLength) return -1;
    start--;
  }
  return start;
}

/**
 * Starts for a pattern of the form `(?<!C)C{min,maxLength}<anchor>`: for each occurrence of
 * `anchor`, in ascending order, the start of the run of class-C characters right before it.
 * The anchor must not itself belong to C, so each run ends at the anchor that follows it.
 */
export function runsBefore(anchor: string, inRun: (code: number) => boolean, maxLength: number): (text: string) => number[] {
  return (text) => {
    const starts: number[] = [];
    for (let at = text.indexOf(anchor); at !== -1; at = text.indexOf(anchor, at + anchor.length)) {
      const start = runStartBefore(text, at, inRun, maxLength);
      if (start !== -1) starts.push(start);
    }
    return starts;
  };
}

/**
 * runsBefore for a class tested on code points (unicodeClass), `maxLength` counted in code points
 * as a `u` regex counts them: a character outside the BMP (a surrogate pair) is one.
 */
export function codePointRunsBefore(anchor: string, inRun: (codePoint: number) => boolean, maxLength: number): (text: string) => number[] {
  return (text) => {
    const starts: number[] = [];
    for (let at = text.indexOf(anchor); at !== -1; at = text.indexOf(anchor, at + anchor.length)) {
      const start = codePointRunStart(text, at, inRun, maxLength);
      if (start !== -1) starts.push(start);
    }
    return starts;
  };
}

function codePointRunStart(text: string, end: number, inRun: (codePoint: number) => boolean, maxLength: number): number {
  let start = end;
  for (let length = 0; start > 0; length++) {
    const unit = text.charCodeAt(start - 1);
    const pair = unit >= 0xdc00 && unit <= 0xdfff && start > 1 && (text.charCodeAt(start - 2) & 0xfc00) === 0xd800;
    if (!inRun(pair ? (text.codePointAt(start - 2) ?? unit) : unit)) break;
    if (length === maxLength) return -1;
    start -= pair ? 2 : 1;
  }
  return start;
}

/** Every offset where `literal` occurs, ascending: for a pattern whose match begins with it. */
export function occurrencesOf(literal: string): (text: string) => number[] {
  return (text) => {
    const starts: number[] = [];
    for (let at = text.indexOf(literal); at !== -1; at = text.indexOf(literal, at + 1)) starts.push(at);
    return starts;
  };
}
