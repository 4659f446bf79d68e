// The protocol as this extension speaks it (vscode-jsonrpc, approvalCards declared) against the
// real Python server: initialize, an approval card answered, an edit applied, error kinds surfaced.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type MessageConnection, StreamMessageReader, StreamMessageWriter, createMessageConnection } from 'vscode-jsonrpc/node';

import * as methods from '../src/common/methods';

const PYTHON = process.env.S_CODE_PYTHON ?? 'python3';
const SAMPLE = resolve(dirname(fileURLToPath(import.meta.url)), '../../../samples/mcp/notes_server.py');

let server: ChildProcess;
let conn: MessageConnection;
let root: string; // the workspace
let home: string; // beside it: s-code's state and configuration (a workspace holding them is refused)
let cards: { kind: string; target: string }[];
let decisions: string[];

beforeEach(async () => {
  home = mkdtempSync(join(tmpdir(), 's-code-vscode-'));
  root = join(home, 'ws');
  mkdirSync(root);
  writeFileSync(join(root, 'a.txt'), 'one\ntwo\n');
  mkdirSync(join(root, '.s-code'));
  writeFileSync(
    join(root, '.s-code', 'mcp.json'),
    JSON.stringify({ mcpServers: { notes: { command: PYTHON, args: [SAMPLE] } } }),
  );
  server = spawn(PYTHON, ['-m', 's_code', 'serve'], {
    env: { ...process.env, S_CODE_STATE_DIR: join(home, 'state'), XDG_CONFIG_HOME: join(home, 'config') },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  conn = createMessageConnection(new StreamMessageReader(server.stdout!), new StreamMessageWriter(server.stdin!));
  cards = [];
  decisions = [];
  conn.onRequest(methods.APPROVAL_REQUEST, (params: { card: { kind: string; target: string } }) => {
    cards.push(params.card);
    return { decision: decisions.shift() ?? 'deny' };
  });
  conn.listen();
  const uri = pathToFileURL(root).toString();
  await conn.sendRequest('initialize', {
    processId: process.pid,
    rootUri: uri,
    workspaceFolders: [{ uri, name: 'ws' }],
    capabilities: { experimental: { sCode: { approvalCards: true } } },
    initializationOptions: { permissionMode: 'manual' },
  });
  conn.sendNotification('initialized', {});
});

afterEach(async () => {
  const exited = new Promise((resolve) => server.once('exit', resolve));
  await conn.sendRequest('shutdown');
  await conn.sendNotification('exit');
  await exited; // the server exits on its own after "exit"
  conn.dispose();
});

describe('the extension protocol against the real server', () => {
  it('reports the mode and answers an approval card, then the edit lands', async () => {
    expect((await conn.sendRequest<{ mode: string }>(methods.PERMISSION_MODE_GET, {})).mode).toBe('manual');
    decisions.push('approve');
    const result = await conn.sendRequest<{ applied: { path: string }[] }>(methods.TOOLS_CALL, {
      name: 'apply_patch',
      arguments: { files: [{ path: 'b.txt', expected_revision: null, content: 'new\n' }] },
    });
    expect(result.applied.map((a) => a.path)).toEqual(['b.txt']);
    expect(cards[0].kind).toBe('edit');
    expect(JSON.parse(cards[0].target)).toEqual(['b.txt']);
    expect(readFileSync(join(root, 'b.txt'), 'utf8')).toBe('new\n');
  });

  it('surfaces error kinds', async () => {
    decisions.push('deny');
    await expect(
      conn.sendRequest(methods.TOOLS_CALL, {
        name: 'apply_patch',
        arguments: { files: [{ path: 'c.txt', expected_revision: null, content: 'x\n' }] },
      }),
    ).rejects.toMatchObject({ data: { kind: 'approval_denied' } });
    await expect(
      conn.sendRequest(methods.TOOLS_CALL, { name: 'read_file', arguments: { path: '../etc/passwd' } }),
    ).rejects.toMatchObject({ data: { kind: 'path_escape' } });
    await expect(conn.sendRequest(methods.PERMISSION_MODE_SET, { mode: 'yolo' })).rejects.toMatchObject({
      data: { kind: 'invalid_params' },
    });
  });

  it('lists an MCP server as pending, approves it through a card, and calls its tool', async () => {
    type View = { entries: { name: string; state: string; tools?: string[] }[] };
    const first = await conn.sendRequest<View>(methods.HOST_PROCESSES_LIST, {});
    expect(first.entries.map((e) => [e.name, e.state])).toEqual([['notes', 'pending']]);
    decisions.push('approve');
    await conn.sendRequest(methods.HOST_PROCESSES_APPROVE, { kind: 'mcp', name: 'notes' });
    expect(cards.at(-1)?.kind).toBe('host_process');
    let entry = first.entries[0];
    for (let i = 0; i < 200 && !(entry.state === 'running' && entry.tools?.length); i++) {
      await new Promise((r) => setTimeout(r, 100));
      entry = (await conn.sendRequest<View>(methods.HOST_PROCESSES_LIST, {})).entries[0];
    }
    expect(entry.tools).toContain('mcp__notes__read_note');
    const result = await conn.sendRequest<{ content: { text: string }[] }>(methods.TOOLS_CALL, {
      name: 'mcp__notes__read_note',
      arguments: { name: 'welcome' },
    });
    expect(result.content[0].text).toContain('host processes');
  }, 30000);
});
