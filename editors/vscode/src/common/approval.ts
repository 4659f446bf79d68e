// Approval cards: the modal, the details document and the decision sent back. The server renders
// every card (`message`: the one-line question, `text`: the whole card) and escapes every string
// in it (control, bidi and invisible characters); the extension shows exactly that. The few lines
// it composes itself (the modal's detail) are escaped again here, as is anything it shows, so a
// string that reached it raw still cannot add a line or reorder one.
// Pure logic over a thin UI interface, so it is tested without VS Code.
import { safe, safeLines } from './shown';

export interface CardFile {
  path: string;
  created: boolean;
  via: string;
  lines_before: number;
  lines_after: number;
  added?: number | null;
  removed?: number | null;
  diff?: string | null;
}

export interface Card {
  id: string;
  kind: string;
  title: string;
  target: string;
  digest: string;
  details: Record<string, unknown>;
  /** The attached agent that asks (its MCP clientInfo name, escaped), when not the editor's own:
   * the server's message already names it ("s-code, for the agent X: ..."), and so does the text. */
  requestedBy?: string;
  /** The one-line question, rendered by the server. */
  message: string;
  /** The whole card, rendered by the server. */
  text: string;
}

export const APPROVE = 'Approve once';
export const DENY = 'Deny';
export const DETAILS = 'Show details';
/** Deny first: the dialog's primary button, so a stray Enter (the modal takes focus in the middle
 * of the user's typing) denies, as Escape does; approving takes a click on "Approve once". */
export const ACTIONS = [DENY, DETAILS, APPROVE];

/** What the extension needs from VS Code to ask; the real one wraps window.showWarningMessage. */
export interface AskUi {
  modal(message: string, detail: string, actions: string[]): Promise<string | undefined>;
  openReadOnly(title: string, text: string): Promise<void>;
  /** The edits of a batch: VS Code's diff editor, one file at a time. */
  openDiff?(card: Card): Promise<void>;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** One line per file: "a.txt  +1 −1", "new.txt  new, 3 lines" (the first eight, then a count). */
function fileLines(card: Card): string[] {
  const files = (card.details.files as CardFile[] | undefined) ?? [];
  const lines = files.slice(0, 8).map((f) => {
    const counts = f.created
      ? `new, ${plural(f.lines_after, 'line')}`
      : f.added != null && f.removed != null
        ? `+${f.added} −${f.removed}`
        : `${f.lines_before} → ${f.lines_after} lines`;
    return `${f.path}  ${counts}${f.via === 'editor' ? '  (into the open editor, unsaved)' : ''}`;
  });
  if (files.length > 8) lines.push(`and ${files.length - 8} more (Show details lists them all)`);
  return lines;
}

interface SandboxShown {
  tier?: number;
  label?: string;
  network?: boolean;
  writable?: string[];
  unreadable?: string[];
  not_prevented?: string[];
}

/** The command's scope in one line each: network, where it writes, what it cannot read. */
function commandLines(card: Card): string[] {
  const d = card.details as { network?: boolean; cwd?: string; sandbox?: SandboxShown };
  const box = d.sandbox ?? {};
  if (box.tier === 3) {
    return ['No sandbox on this machine: it runs with your own access to files and network.'];
  }
  const lines = [
    `Network: ${d.network ? 'on (asked for)' : 'off'} · sandbox: ${box.label ?? `tier ${box.tier ?? '?'}`}`,
    `May write: ${(box.writable ?? []).join(', ') || 'nothing'}`,
    `Cannot read: ${(box.unreadable ?? []).join(', ') || '(nothing hidden)'}`,
  ];
  for (const gap of box.not_prevented ?? []) lines.push(`Not prevented here: ${gap}`);
  return lines;
}

/** The modal's detail text: what the user most needs to weigh, without opening anything. Each
 * line is made safe: a path holding a newline or a bidi override stays on its own line, as is. */
export function modalDetail(card: Card): string {
  const body =
    card.kind === 'edit'
      ? fileLines(card)
      : card.kind === 'command'
        ? commandLines(card)
        : card.kind === 'host_process'
          ? ["Runs outside the sandbox with your account's filesystem and network access."]
          : [card.title];
  return [...body.map(safe), '', 'Enter or Escape denies. "Show details" opens the whole card.'].join('\n');
}

/** The unified diffs an edit card carries (the server adds them when it asks). */
export function diffText(card: Card): string {
  if (card.kind !== 'edit') return '';
  const files = (card.details.files as CardFile[] | undefined) ?? [];
  return files
    .map((f) => f.diff ?? '')
    .filter(Boolean)
    .join('\n');
}

/** Ask about one card: the modal, details as often as asked (bounded), then the decision. */
export async function decide(card: Card, ui: AskUi, maxDetails = 5): Promise<'approve' | 'deny'> {
  for (let i = 0; i <= maxDetails; i++) {
    const answer = await ui.modal(safe(card.message), modalDetail(card), ACTIONS);
    if (answer !== DETAILS) {
      return answer === APPROVE ? 'approve' : 'deny';
    }
    await ui.openReadOnly('card', safeLines(card.text));
    if (diffText(card) && ui.openDiff) await ui.openDiff(card);
  }
  return 'deny';
}
