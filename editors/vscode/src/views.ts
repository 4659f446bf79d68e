// What the extension shows besides the modal: read-only virtual documents (the card, the plan, the
// tools, a sandbox preview: one tab per kind, reused, never a dirty Untitled editor), an edit's
// files in VS Code's diff editor, and the plan as a live tree view.
import * as vscode from 'vscode';

import type { Card, CardFile } from './common/approval';
import { SCHEME, applyUnifiedDiff, detailsPath, proposedPath } from './common/details';
import { safe, safeLines, unshown } from './common/shown';

export class Details implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.path) ?? '';
  }

  private put(path: string, text: string): vscode.Uri {
    const uri = vscode.Uri.from({ scheme: SCHEME, path });
    this.texts.set(path, text);
    this.changed.fire(uri);
    return uri;
  }

  /** The read-only document of `kind` (its one tab), holding `markdown`. */
  async show(kind: string, markdown: string, preserveFocus = false): Promise<void> {
    const uri = this.put(detailsPath(kind), markdown);
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc, { preview: true, preserveFocus });
  }

  /** An edit card's files in the diff editor: what the server edited (the open buffer, else the
   * file) against the proposed text; a diff that cannot be rebuilt is shown as a diff document.
   * Names and the diff document are shown escaped, as the card holds them; the file is found,
   * and its proposed text rebuilt, from what they really are. */
  async showDiffs(card: Card, limit = 5): Promise<void> {
    const files = ((card.details.files as CardFile[] | undefined) ?? []).filter((f) => f.diff);
    for (const f of files.slice(0, limit)) {
      const name = safe(f.path);
      const target = fileUri(unshown(String(f.path)));
      const before = f.created || !target ? '' : await currentText(target);
      const proposed = before === undefined ? undefined : applyUnifiedDiff(before, f.diff ?? '');
      if (proposed === undefined || !target) {
        const uri = this.put(`/diff/${name}.diff`, safeLines(f.diff));
        await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri), { preview: false });
        continue;
      }
      const right = this.put(proposedPath(name), proposed);
      const left = f.created ? this.put(`/empty/${name}`, '') : target;
      await vscode.commands.executeCommand('vscode.diff', left, right, `${name}: proposed by s-code`, {
        preview: files.length === 1,
      });
    }
  }
}

/** The file a card path names: relative to the only folder, or `<folder name>/<path>`. */
function fileUri(path: string): vscode.Uri | undefined {
  const folders = vscode.workspace.workspaceFolders ?? [];
  if (folders.length === 1) return vscode.Uri.joinPath(folders[0].uri, path);
  const [name, ...rest] = path.split('/');
  const folder = folders.find((f) => f.name === name);
  return folder ? vscode.Uri.joinPath(folder.uri, ...rest) : undefined;
}

/** The text s-code edited: the open editor's (unsaved included), else the file's. */
async function currentText(uri: vscode.Uri): Promise<string | undefined> {
  const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
  if (open) return open.getText();
  try {
    return new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
  } catch {
    return undefined;
  }
}

interface Step {
  step: string;
  status: string;
}

const ICONS: Record<string, string> = { pending: 'circle-large-outline', in_progress: 'sync', completed: 'pass' };

/** The plan as a tree view that follows s-code/planUpdated. */
export class PlanTree implements vscode.TreeDataProvider<Step> {
  private steps: Step[] = [];
  private readonly changed = new vscode.EventEmitter<undefined>();
  readonly onDidChangeTreeData = this.changed.event;

  update(plan: { plan?: Step[] }): void {
    this.steps = plan.plan ?? [];
    this.changed.fire(undefined);
  }

  getChildren(element?: Step): Step[] {
    return element ? [] : this.steps;
  }

  getTreeItem(step: Step): vscode.TreeItem {
    const item = new vscode.TreeItem(step.step);
    item.description = step.status.replace('_', ' ');
    item.iconPath = new vscode.ThemeIcon(ICONS[step.status] ?? 'question');
    return item;
  }
}
