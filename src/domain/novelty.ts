import { stemmer } from 'stemmer';

/**
 * How much a reply adds over an earlier one, as a normalised similarity a person can check by hand:
 * each text becomes the set of its content words — lower case, Porter-stemmed ("rolls back" meets
 * "rollback"'s "roll" and "back", "migrating" meets "migration" as "migrat"), stop words out, numbers
 * kept, words that only announce a repeat ("as I said", "I agree") out — and the *containment* of the new reply in the earlier one is the share of the new reply's
 * content words the earlier one already had (1 = every word already said, 0 = all new). Containment,
 * not a symmetric overlap: a reply that only restates part of what was said adds nothing, however
 * short it is. A negation (not, no, never, n't…) counts as a word, and a reply whose negation differs
 * from the earlier one's is never "the same": "do not use Redis" after "use Redis" says something new.
 */
export function containment(reply: string, earlier: string): number {
  const now = contentWords(reply);
  if (now.size === 0) return 1;
  const before = contentWords(earlier);
  if (now.has(NEGATION) !== before.has(NEGATION)) return 0;
  let said = 0;
  for (const w of now) if (before.has(w)) said += 1;
  return said / now.size;
}

/** At or over this containment a reply adds nothing over the earlier one (three content words in four already said). */
export const NOTHING_NEW = 0.75;

const NEGATION = '¬';
const NEGATIONS = new Set(['not', 'no', 'never', 'none', 'nothing', 'nor', 'cannot', 'neither', 'without']);
const STOP_WORDS = new Set(
  [
    'a an and are as at be been being but by can could did do does for from had has have he her his i if in into is it its',
    'me my of on or our ours shall she should so some such than that the their them then there these they this those to',
    'too us very was we were what when where which while who whom why will with would you your yours also just only still',
    'yet again more most much many any all each every both either here now one ones own same well let ok okay yes',
    // Words that only announce a repeat: "as I said", "I agree", "to summarise", "as mentioned earlier".
    'said say says saying agree agreed agrees already earlier previously mentioned noted repeat reiterate stated summarise summarize summary',
  ]
    .join(' ')
    .split(' '),
);

/** The content words of a text, stemmed, as a set. */
function contentWords(text: string): Set<string> {
  const words = new Set<string>();
  const normal = text
    .toLowerCase()
    .replace(/[’`]/g, "'")
    .replace(/n't\b/g, ' not')
    .replace(/'(s|re|ve|ll|d|m)\b/g, '');
  for (const word of normal.match(/[\p{L}\p{N}]+/gu) ?? []) {
    if (NEGATIONS.has(word)) words.add(NEGATION);
    else if (!STOP_WORDS.has(word) && (word.length > 1 || /\d/.test(word))) words.add(stemmer(word));
  }
  return words;
}
