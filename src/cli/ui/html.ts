import { Marked, type Tokens } from 'marked';
import { screenText } from '../../domain/screen.js';

/** HTML that is already safe to send: built by `html` (every value escaped) or by `markdownHtml`. */
export class SafeHtml {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

type Value = SafeHtml | string | number | boolean | null | undefined | readonly Value[];

const ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/**
 * A text as a page may show it: screened by the detector (a console shows only what the audit log
 * would keep, whatever the record it came from), then escaped for HTML.
 */
export function escapeText(text: string): string {
  return screenText(text).replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

/**
 * What a person typed in this very request, put back in their form after a refusal. A page never shows
 * what the audit log would not keep, and a form sent again with "[REDACTED:…]" in it would silently
 * change what the person wrote: text the screen would change comes back empty, and `withheld` says so.
 */
export function typed(text: string): SafeHtml {
  return new SafeHtml(screenText(text) === text ? escapeText(text) : '');
}

/** The sentence for a form `typed` left empty: why, and what to do. */
export function withheld(text: string | undefined, what: string): SafeHtml | '' {
  if (!text || screenText(text) === text) return '';
  return html`<p class="notice refused" role="status">${what} is not shown again: it holds data this console never shows (an address,
a number, a key). Type or paste it again.</p>`;
}

function render(value: Value): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof SafeHtml) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeText(String(value));
}

/** A template for pages: every interpolated value is screened and escaped unless it is SafeHtml already. */
export function html(strings: TemplateStringsArray, ...values: Value[]): SafeHtml {
  let out = strings[0] ?? '';
  values.forEach((v, i) => {
    out += render(v) + (strings[i + 1] ?? '');
  });
  return new SafeHtml(out);
}

/** Only links a person can follow safely: the web, or a place on this page. */
const SAFE_LINK = /^(https?:|#)/i;

/**
 * Markdown (a transcript, an artifact) as HTML for a page. The text is screened first; any HTML in
 * it (a model may write some) is shown as text, never run; links go only to the web; pictures come
 * only from `pictureUrl` (the files beside the run's artifact), else they are named, not loaded.
 */
export function markdownHtml(markdown: string, pictureUrl: (file: string) => string | undefined = () => undefined): SafeHtml {
  const marked = new Marked({ async: false, gfm: true });
  marked.use({
    renderer: {
      html: (token: Tokens.HTML | Tokens.Tag) => escapeText(token.text),
      link(token: Tokens.Link) {
        const label = this.parser.parseInline(token.tokens);
        return SAFE_LINK.test(token.href) ? `<a href="${escapeText(token.href)}" rel="noreferrer noopener">${label}</a>` : label;
      },
      image(token: Tokens.Image) {
        const src = pictureUrl(token.href);
        // Fetched by the page's script with the tab's session (an <img src> would go without it).
        return src ? `<img data-src="${escapeText(src)}" alt="${escapeText(token.text)}">` : `[picture: ${escapeText(token.text)}]`;
      },
    },
  });
  return new SafeHtml(marked.parse(screenText(markdown)) as string);
}
