// The status bar text: the permission mode and the sandbox tier.
export function statusText(mode: string | undefined, tier: number | undefined, pendingHosts = 0): string {
  const box = tier === undefined ? '' : tier === 3 ? ' · unsandboxed' : ` · sandbox tier ${tier}`;
  const hosts = pendingHosts > 0 ? ` · ${pendingHosts} server(s) to approve` : '';
  return `$(shield) s-code: ${mode ?? 'starting'}${box}${hosts}`;
}

export function planLines(plan: { plan?: { step: string; status: string }[]; explanation?: string }): string[] {
  const marks: Record<string, string> = { pending: '[ ]', in_progress: '[~]', completed: '[x]' };
  const lines = ['# s-code plan', ''];
  if (plan.explanation) {
    lines.push(plan.explanation, '');
  }
  (plan.plan ?? []).forEach((s, i) => lines.push(`${i + 1}. ${marks[s.status] ?? '[?]'} ${s.step}`));
  return lines;
}

/** What each permission mode lets the agent do without asking (the mode picker's descriptions). */
export const MODE_DESCRIPTIONS: Record<string, string> = {
  manual: 'asks before every edit and every command',
  'accept-edits': 'edits the workspace without asking; asks before commands',
  workspace: 'edits and sandboxed commands without asking; asks for network, host processes and anything outside',
};

const TIERS: Record<number, string> = {
  1: 'bubblewrap + Landlock + seccomp: commands run with no network, write only the workspace, its caches and a private tmp, and cannot read your home',
  2: 'Landlock + seccomp (no bubblewrap here): the same rules, with a few things it cannot prevent (`s-code doctor` lists them)',
  3: 'no sandbox on this machine: every command asks, in every mode, and runs with your access',
};

/** The status bar's tooltip: the mode and the tier, in words. */
export function statusTooltip(mode: string | undefined, tier: number | undefined): string {
  const lines = [
    `**Permission mode: ${mode ?? 'starting'}**: ${MODE_DESCRIPTIONS[mode ?? ''] ?? 'the server is starting'}.`,
    '',
    tier === undefined ? 'Sandbox: not known yet.' : `**Sandbox tier ${tier}**: ${TIERS[tier] ?? 'unknown tier'}.`,
    '',
    'Click to change the mode.',
  ];
  return lines.join('\n');
}

export interface CommandStatus {
  commandId: string;
  argv?: string[];
  cwd?: string;
  state: 'running' | 'exited' | 'failed';
  exitCode?: number | null;
  timedOut?: boolean;
  durationMs?: number;
}

/** The output view's line for a command's start (a header) or its end (the exit). */
export function commandStatusLine(s: CommandStatus): string {
  if (s.state === 'running') return `\n$ ${(s.argv ?? []).join(' ')}    (in ${s.cwd ?? '.'}, ${s.commandId})`;
  if (s.state === 'failed') return '[could not run]';
  const how = s.timedOut ? 'timed out' : `exit ${s.exitCode}`;
  return `[${how}, ${s.durationMs ?? 0} ms]`;
}

export interface Turn {
  turnId: string;
  beganAt: number;
  undone: boolean;
  files: string[];
}

/** The undo picker's items: the turns not undone yet, newest first, with their files. */
export function turnItems(turns: Turn[], now = Date.now()): { label: string; description: string; turnId: string }[] {
  return turns
    .filter((t) => !t.undone)
    .map((t) => {
      const shown = t.files.slice(0, 3).join(', ') + (t.files.length > 3 ? ', …' : '');
      const minutes = Math.max(0, Math.round((now / 1000 - t.beganAt) / 60));
      return {
        label: `${t.files.length} file${t.files.length === 1 ? '' : 's'}: ${shown}`,
        description: `${minutes} min ago · ${t.turnId}`,
        turnId: t.turnId,
      };
    });
}
