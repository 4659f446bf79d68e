import { describe, expect, it } from 'vitest';

import { APPROVE, type AskUi, type Card, DENY, DETAILS, decide } from '../src/common/approval';
import { Backoff } from '../src/common/restart';
import { hostActions, hostItems, pendingCount } from '../src/common/hosts';
import { planLines, statusText } from '../src/common/status';

const batch: Card = {
  id: 'a-1',
  kind: 'edit',
  title: 'Edit 32 files',
  target: JSON.stringify(Array.from({ length: 32 }, (_, i) => `pkg/m${i}.py`)),
  digest: 'f'.repeat(64),
  message: 's-code: Edit 32 files: pkg/m0.py (new, 1 line), pkg/m1.py (+1 -0) and 30 more?',
  text: Array.from({ length: 32 }, (_, i) => `  M pkg/m${i}.py`).join('\n'),
  details: {
    files: Array.from({ length: 32 }, (_, i) => ({
      path: `pkg/m${i}.py`,
      created: i % 2 === 0,
      via: 'disk',
      lines_before: 0,
      lines_after: 1,
    })),
  },
};

function scripted(answers: (string | undefined)[]) {
  const shown: string[] = [];
  const asked: string[] = [];
  const ui: AskUi = {
    modal: async (message, _detail, actions) => {
      asked.push(message);
      expect(actions).toEqual([APPROVE, DENY, DETAILS]);
      return answers.shift();
    },
    openReadOnly: async (_title, markdown) => {
      shown.push(markdown);
    },
  };
  return { ui, shown, asked };
}

describe('approval cards', () => {
  it('approves once on "Approve once"', async () => {
    const { ui, asked } = scripted([APPROVE]);
    expect(await decide(batch, ui)).toBe('approve');
    expect(asked).toEqual([batch.message]); // the server's words, as they are
  });

  it('denies on Deny and on dismissal', async () => {
    expect(await decide(batch, scripted([DENY]).ui)).toBe('deny');
    expect(await decide(batch, scripted([undefined]).ui)).toBe('deny');
  });

  it('shows every path in the details, then asks again', async () => {
    const { ui, shown, asked } = scripted([DETAILS, APPROVE]);
    expect(await decide(batch, ui)).toBe('approve');
    expect(asked).toHaveLength(2);
    expect(shown).toEqual([batch.text]); // the server's rendering, unchanged
  });

  it('opens the diff of an edit next to the details', async () => {
    const diffs: string[] = [];
    const withDiff: Card = {
      ...batch,
      details: { files: [{ path: 'a.txt', created: false, via: 'disk', lines_before: 2, lines_after: 2, diff: '--- a/a.txt\n+++ b/a.txt\n-one\n+ONE' }] },
    };
    const { ui, shown } = scripted([DETAILS, DENY]);
    ui.openDiff = async (text) => {
      diffs.push(text);
    };
    expect(await decide(withDiff, ui)).toBe('deny');
    expect(diffs).toEqual(['--- a/a.txt\n+++ b/a.txt\n-one\n+ONE']);
    expect(shown[0]).toBe(withDiff.text);
  });

  it('gives up (deny) after too many detail requests', async () => {
    const { ui } = scripted(Array(10).fill(DETAILS));
    expect(await decide(batch, ui, 3)).toBe('deny');
  });
});

describe('restart backoff', () => {
  it('doubles, caps, and gives up after too many crashes in the window', () => {
    const b = new Backoff(1000, 4000, 4, 60000);
    expect([b.next(0), b.next(1), b.next(2), b.next(3)]).toEqual([1000, 2000, 4000, 4000]);
    expect(b.next(4)).toBeUndefined();
    const later = new Backoff(1000, 4000, 4, 60000);
    later.next(0);
    expect(later.next(120000)).toBe(1000); // old crashes leave the window
  });
});

describe('status and plan', () => {
  it('shows the mode and the tier', () => {
    expect(statusText('manual', 1)).toBe('$(shield) s-code: manual · sandbox tier 1');
    expect(statusText('workspace', 3)).toBe('$(shield) s-code: workspace · unsandboxed');
    expect(statusText(undefined, undefined)).toBe('$(shield) s-code: starting');
  });

  it('renders the plan', () => {
    const lines = planLines({ plan: [{ step: 'a', status: 'completed' }, { step: 'b', status: 'in_progress' }] });
    expect(lines.slice(2)).toEqual(['1. [x] a', '2. [~] b']);
  });
});

describe('host processes', () => {
  const view = {
    entries: [
      { kind: 'mcp', name: 'notes', layer: 'workspace', state: 'pending' as const },
      { kind: 'mcp', name: 'search', layer: 'user', state: 'running' as const, tools: ['a', 'b'] },
      { kind: 'mcp', name: 'grown', layer: 'user', state: 'running' as const, toolsPendingApproval: ['extra'] },
    ],
  };

  it('lists every entry with its state and what it needs', () => {
    const items = hostItems(view);
    expect(items.map((i) => i.description)).toEqual([
      'mcp · workspace · pending',
      'mcp · user · running',
      'mcp · user · running',
    ]);
    expect(items[0].detail).toContain('not running until you approve it');
    expect(items[1].detail).toContain('2 tool(s)');
    expect(items[2].detail).toContain('1 tool(s) changed since approval');
    for (const i of items) expect(i.detail).toContain('outside the sandbox');
  });

  it('counts what waits for the user and offers the right action', () => {
    expect(pendingCount(view)).toBe(2);
    expect(statusText('manual', 1, pendingCount(view))).toBe(
      '$(shield) s-code: manual · sandbox tier 1 · 2 server(s) to approve',
    );
    expect(hostActions(view.entries[0])).toEqual(['Approve…', 'Cancel']);
    expect(hostActions(view.entries[1])).toEqual(['Revoke', 'Cancel']);
  });
});
