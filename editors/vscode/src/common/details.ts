// Read-only views of what s-code shows: one virtual document per kind (the card, the plan, the
// tools, a sandbox preview), reused, never a dirty Untitled editor; and an edit's proposed text,
// rebuilt from the card's unified diff for VS Code's diff editor.
import { unshown } from './shown';

export const SCHEME = 's-code';

/** The virtual document of a kind: one URI, so VS Code reuses its tab. */
export function detailsPath(kind: string): string {
  return `/${kind.replace(/[^A-Za-z0-9_-]/g, '-')}.md`;
}

/** The path of an edited file's proposed text in the virtual documents. */
export function proposedPath(file: string): string {
  return `/proposed/${file}`;
}

const HUNK = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

/**
 * ``before`` with the card's unified diff applied, or undefined when it does not apply exactly
 * (the diff was cut short, redacted, or ``before`` changed since): the caller then shows the diff
 * itself. The server escapes each line of the diff (a tab is ``\t``, a bidi override ``\u202e``):
 * a line is compared and added as it really is (``unshown``). Like the server's diff, lines are
 * split on LF only, and a text that ends with a line end has an empty last "line".
 */
export function applyUnifiedDiff(before: string, diff: string): string | undefined {
  const source = before.split('\n');
  const out: string[] = [];
  let at = 0; // the next line of `source` not yet copied
  let sawHunk = false;
  const lines = diff.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const m = HUNK.exec(lines[i]);
    if (!m) continue;
    sawHunk = true;
    const start = Math.max(Number(m[1]) - (m[2] === '0' ? 0 : 1), 0);
    if (start < at || start > source.length) return undefined;
    out.push(...source.slice(at, start));
    at = start;
    for (i++; i < lines.length && !HUNK.test(lines[i]); i++) {
      const line = lines[i];
      const body = unshown(line.slice(1));
      if (line.startsWith('+')) {
        out.push(body);
      } else if (line.startsWith(' ') || line.startsWith('-')) {
        if (source[at] !== body) return undefined;
        if (line.startsWith(' ')) out.push(body);
        at++;
      } else {
        return undefined; // "... N more diff lines": cut short
      }
    }
    i--;
  }
  if (!sawHunk) return undefined;
  out.push(...source.slice(at));
  return out.join('\n');
}
