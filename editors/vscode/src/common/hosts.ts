// Host processes (MCP servers the user installs): how the extension lists them and what the
// status bar says about them. Pure logic, tested without VS Code.

export interface HostEntry {
  kind: string;
  name: string;
  layer: string;
  state: 'pending' | 'trusted' | 'starting' | 'running' | 'stopped' | 'failed';
  hash?: string | null;
  error?: string;
  tools?: string[];
  toolsPendingApproval?: string[];
  event?: string; // a hook's
  matcher?: string;
}

export interface HostView {
  entries: HostEntry[];
  problems?: string[];
}

export interface HostItem {
  label: string;
  description: string;
  detail: string;
  entry: HostEntry;
}

/** One quick-pick item per entry: its state first, what needs the user spelled out. */
export function hostItems(view: HostView): HostItem[] {
  return view.entries.map((e) => {
    const needs =
      e.state === 'pending'
        ? 'not running until you approve it'
        : e.toolsPendingApproval?.length
          ? `${e.toolsPendingApproval.length} tool(s) changed since approval (hidden)`
          : e.error ??
          (e.kind === 'hook'
            ? `${e.event} on ${e.matcher || 'every tool'}`
            : e.kind === 'terminal'
              ? 'a background terminal (s-code: Terminals)'
              : `${e.tools?.length ?? 0} tool(s)`);
    return {
      label: `${e.name}`,
      description: `${e.kind} · ${e.layer} · ${e.state}`,
      detail: `${needs} · runs outside the sandbox, with your account's access`,
      entry: e,
    };
  });
}

/** How many entries wait for the user (pending, or with tools pending approval). */
export function pendingCount(view: HostView | undefined): number {
  return (view?.entries ?? []).filter((e) => e.state === 'pending' || (e.toolsPendingApproval?.length ?? 0) > 0).length;
}

/** The actions offered for one entry. */
export function hostActions(e: HostEntry): string[] {
  if (e.state === 'pending' || (e.toolsPendingApproval?.length ?? 0) > 0) return ['Approve…', 'Cancel'];
  return ['Revoke', 'Cancel'];
}
