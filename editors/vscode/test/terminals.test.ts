import { describe, expect, it } from 'vitest';

import { hostItems } from '../src/common/hosts';
import { TerminalStreams, channelName, exitText, terminalActions, terminalItems } from '../src/common/terminals';

describe('background terminals', () => {
  it('puts each stream in order, holding what arrives early', () => {
    const s = new TerminalStreams();
    expect(s.accept({ terminalId: 't', seq: 1, text: 'a' })).toBe('a');
    expect(s.accept({ terminalId: 't', seq: 3, text: 'c' })).toBe('');
    expect(s.accept({ terminalId: 'u', seq: 1, text: 'x' })).toBe('x');
    expect(s.accept({ terminalId: 't', seq: 2, text: 'b' })).toBe('bc');
    expect(s.accept({ terminalId: 't', seq: 2, text: 'b' })).toBe(''); // a repeat is dropped
  });

  it('lists terminals with what can be done to each', () => {
    const running = {
      terminal_id: 'term-1',
      command: ['npm', 'run', 'dev'],
      cwd: '/ws',
      tty: false,
      state: 'running' as const,
      exit: null,
      bytes: 10,
    };
    const killed = { ...running, terminal_id: 'term-2', state: 'killed' as const, exit: { code: null, signal: 'SIGTERM' } };
    const items = terminalItems([running, killed]);
    expect(items[0].detail).toContain('npm run dev');
    expect(items[1].description).toBe('killed (signal SIGTERM)');
    expect(terminalActions(running)).toContain('Kill');
    expect(terminalActions(killed)).not.toContain('Kill');
    expect(exitText({ code: 3, signal: null })).toBe('exit 3');
    expect(channelName('term-1')).toBe('s-code terminal term-1');
  });

  it('lists a pending hook with what it covers', () => {
    const [item] = hostItems({ entries: [{ kind: 'hook', name: 'PreToolUse.0.0', layer: 'workspace', state: 'trusted', event: 'PreToolUse', matcher: 'apply_patch' }] });
    expect(item.detail).toContain('PreToolUse on apply_patch');
  });
});
