// Approval cards: what the modal says, what the details document holds, and the decision sent
// back. Pure logic over a thin UI interface, so it is tested without VS Code.

export interface CardFile {
  path: string;
  created: boolean;
  via: string;
  lines_before: number;
  lines_after: number;
  diff?: string;
}

export interface Card {
  id: string;
  kind: string;
  title: string;
  target: string;
  digest: string;
  details: Record<string, unknown>;
}

export const APPROVE = 'Approve once';
export const DENY = 'Deny';
export const DETAILS = 'Show details';

/** What the extension needs from VS Code to ask; the real one wraps window.showWarningMessage. */
export interface AskUi {
  modal(message: string, detail: string, actions: string[]): Promise<string | undefined>;
  openReadOnly(title: string, markdown: string): Promise<void>;
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

export function summary(card: Card): string {
  if (card.kind === 'edit') {
    const files = (card.details.files as CardFile[] | undefined) ?? [];
    const created = files.filter((f) => f.created).length;
    return `${files.length} file(s), ${created} new`;
  }
  if (card.kind === 'command') {
    const box = card.details.sandbox as { label?: string } | undefined;
    return `${card.details.network ? 'network REQUESTED, ' : ''}sandbox: ${box?.label ?? '?'}`;
  }
  return card.kind;
}

export function render(card: Card): string {
  const lines = [`# s-code asks: ${card.title}`, '', `- kind: ${card.kind}`, `- digest: ${card.digest}`];
  lines.push(`- target: ${card.target}`, '');
  if (card.kind === 'edit') {
    for (const f of (card.details.files as CardFile[] | undefined) ?? []) {
      const change = f.created ? 'new file' : `${f.lines_before} → ${f.lines_after} lines`;
      lines.push(`- \`${f.path}\` (${change}, via ${f.via})`);
    }
    const diff = diffText(card);
    if (diff) lines.push('', '## changes', '', '```diff', diff, '```');
  } else {
    lines.push('```json', JSON.stringify(card.details, null, 2), '```');
  }
  lines.push('');
  return lines.join('\n');
}

/** Ask about one card: the modal, details as often as asked (bounded), then the decision. */
export async function decide(card: Card, ui: AskUi, maxDetails = 5): Promise<'approve' | 'deny'> {
  for (let i = 0; i <= maxDetails; i++) {
    const answer = await ui.modal(`s-code: ${card.title}?`, summary(card), [APPROVE, DENY, DETAILS]);
    if (answer !== DETAILS) {
      return answer === APPROVE ? 'approve' : 'deny';
    }
    await ui.openReadOnly(`s-code approval ${card.id}`, render(card));
    const diff = diffText(card);
    if (diff && ui.openDiff) await ui.openDiff(diff);
  }
  return 'deny';
}
