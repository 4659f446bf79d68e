// Approval cards: the modal, the details document and the decision sent back. The server renders
// every card (`message`: the one-line question, `text`: the whole card, control and bidi
// characters already escaped); the extension shows exactly that, and renders nothing itself.
// Pure logic over a thin UI interface, so it is tested without VS Code.

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
  /** The one-line question, rendered by the server. */
  message: string;
  /** The whole card, rendered by the server. */
  text: string;
}

export const APPROVE = 'Approve once';
export const DENY = 'Deny';
export const DETAILS = 'Show details';

/** What the extension needs from VS Code to ask; the real one wraps window.showWarningMessage. */
export interface AskUi {
  modal(message: string, detail: string, actions: string[]): Promise<string | undefined>;
  openReadOnly(title: string, text: string): Promise<void>;
  /** The unified diff of an edit batch, shown with diff highlighting. */
  openDiff?(text: string): Promise<void>;
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
    const answer = await ui.modal(card.message, 'Show details for the whole card.', [APPROVE, DENY, DETAILS]);
    if (answer !== DETAILS) {
      return answer === APPROVE ? 'approve' : 'deny';
    }
    await ui.openReadOnly(`s-code approval ${card.id}`, card.text);
    const diff = diffText(card);
    if (diff && ui.openDiff) await ui.openDiff(diff);
  }
  return 'deny';
}
