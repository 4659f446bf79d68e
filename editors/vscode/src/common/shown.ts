// Text the extension shows, made safe to show: the server escapes every string of a card (control,
// bidi, zero-width and other invisible characters, written `\n`, `\x1b`, `\u202e`), and the
// extension escapes what it composes itself the same way, in case a string reaches it raw.
// `safe` leaves backslashes as they are, so a string the server escaped is shown as it came;
// `unshown` undoes the server's escaping, only to rebuild an edit's proposed text for the diff
// editor (an editor, which shows a file's invisible characters as such).

/** Controls, line and paragraph separators, format characters (bidi embeddings, overrides and
 * isolates, zero-width spaces and joiners, the BOM, soft hyphen...), private-use, surrogate and
 * unassigned code points, and the invisible ones Unicode calls default-ignorable. */
const UNSAFE =
  /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Co}\p{Cs}\p{Cn}\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u3164\ufe00-\ufe0f\uffa0\u{e0000}-\u{e0fff}]/gu;
const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function hex(code: number, width: number): string {
  return code.toString(16).padStart(width, '0');
}

function escapeOne(ch: string): string {
  const code = ch.codePointAt(0) ?? 0;
  if (NAMED[ch]) return NAMED[ch];
  if (code < 0x100) return `\\x${hex(code, 2)}`;
  return code < 0x10000 ? `\\u${hex(code, 4)}` : `\\U${hex(code, 8)}`;
}

/** `text` on one line with every unsafe character escaped (a newline too). */
export function safe(text: unknown): string {
  return String(text ?? '').replace(UNSAFE, escapeOne);
}

/** A document: each line made safe, the line ends kept. */
export function safeLines(text: unknown): string {
  return String(text ?? '')
    .split('\n')
    .map(safe)
    .join('\n');
}

const ESCAPE = /\\(\\|n|r|t|x[0-9a-f]{2}|u[0-9a-f]{4}|U[0-9a-f]{8})/g;

/** The text the server escaped: `\\` a backslash, `\n` `\r` `\t`, `\xHH`, `\uHHHH`, `\UHHHHHHHH`
 * the character; any other backslash is itself (the server doubles every one that could be read
 * as the start of an escape). */
export function unshown(text: string): string {
  return text.replace(ESCAPE, (whole, e: string) => {
    if (e === '\\') return '\\';
    if (e === 'n') return '\n';
    if (e === 'r') return '\r';
    if (e === 't') return '\t';
    const code = parseInt(e.slice(1), 16);
    return code <= 0x10ffff ? String.fromCodePoint(code) : whole;
  });
}
