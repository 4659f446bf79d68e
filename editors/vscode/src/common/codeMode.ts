// code_mode's child calls (s-code/codeMode/toolCall) as lines of the commands output view,
// nested under their run: the run's header once, then a line when a call starts and one when it ends.
export interface ToolCallNote {
  runId: string;
  callId: string;
  name: string;
  arguments: unknown;
  status: string;
  durationMs?: number;
}

const MAX_ARGS = 120;

export class CodeModeView {
  private readonly seen = new Set<string>();

  lines(note: ToolCallNote): string[] {
    const out: string[] = [];
    if (!this.seen.has(note.runId)) {
      this.seen.add(note.runId);
      out.push(`code_mode ${note.runId}`);
    }
    const n = /\.(\d+)$/.exec(note.callId)?.[1] ?? '?';
    if (note.status === 'running') {
      let args = JSON.stringify(note.arguments ?? {}) ?? '';
      if (args.length > MAX_ARGS) args = `${args.slice(0, MAX_ARGS - 3)}...`;
      out.push(`  ${n}. ${note.name} ${args}`);
    } else {
      out.push(`  ${n}. ${note.name} ${note.status} (${note.durationMs ?? 0} ms)`);
    }
    return out;
  }
}
