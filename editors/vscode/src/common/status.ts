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
