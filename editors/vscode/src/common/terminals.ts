// Background terminals (terminal_start and friends): how the extension shows their streams and
// lists them. Pure logic, tested without VS Code.

export interface TerminalNote {
  terminalId: string;
  seq: number;
  text: string;
}

export interface TerminalEntry {
  terminal_id: string;
  command: string[];
  cwd: string;
  tty: boolean;
  state: 'running' | 'exited' | 'killed';
  exit: { code: number | null; signal: string | null } | null;
  bytes: number;
}

/** Puts each terminal's output in order (by seq) and says where it goes. */
export class TerminalStreams {
  private next = new Map<string, number>();
  private held = new Map<string, Map<number, string>>();

  /** The text to append now for this note (empty when it arrived early: held until its turn). */
  accept(note: TerminalNote): string {
    const want = this.next.get(note.terminalId) ?? 1;
    if (note.seq < want) return '';
    const held = this.held.get(note.terminalId) ?? new Map<number, string>();
    held.set(note.seq, note.text);
    this.held.set(note.terminalId, held);
    let out = '';
    let seq = want;
    while (held.has(seq)) {
      out += held.get(seq);
      held.delete(seq);
      seq += 1;
    }
    this.next.set(note.terminalId, seq);
    return out;
  }
}

/** The name of a terminal's output view. */
export function channelName(terminalId: string): string {
  return `s-code terminal ${terminalId}`;
}

export function terminalItems(list: TerminalEntry[]): { label: string; description: string; detail: string; entry: TerminalEntry }[] {
  return list.map((t) => ({
    label: t.terminal_id,
    description: t.state === 'running' ? 'running' : `${t.state} (${exitText(t.exit)})`,
    detail: `${t.command.join(' ')} · ${t.cwd} · ${t.bytes} bytes`,
    entry: t,
  }));
}

export function exitText(exit: TerminalEntry['exit']): string {
  if (!exit) return 'running';
  return exit.signal ? `signal ${exit.signal}` : `exit ${exit.code}`;
}

export function terminalActions(t: TerminalEntry): string[] {
  return t.state === 'running' ? ['Show output', 'Kill', 'Cancel'] : ['Show output', 'Cancel'];
}
