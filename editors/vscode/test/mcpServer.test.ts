import * as fs from 'node:fs';
import * as path from 'node:path';

import { describe, expect, it } from 'vitest';

import {
  ENABLED_SETTING,
  PROVIDER_ID,
  type VscodeLike,
  detectMcpApi,
  linkEnv,
  mcpCommand,
  offerMcpServer,
} from '../src/common/mcpServer';

/** VS Code's McpStdioServerDefinition, as its constructor and cwd leave it. */
class FakeDefinition {
  cwd?: unknown;
  constructor(
    readonly label: string,
    readonly command: string,
    readonly args: string[] = [],
    readonly env: Record<string, string | null> = {},
    readonly version?: string,
  ) {}
}

type Listener = (e: { affectsConfiguration(section: string): boolean }) => unknown;

/** A `vscode` module: its settings, folders and events under the test's control, and with the MCP
 * API (1.101+) or without it (older). */
const TWO = [
  { name: 'app', uri: { fsPath: '/home/u/app', scheme: 'file' } },
  { name: 'lib', uri: { fsPath: '/home/u/lib', scheme: 'file' } },
];

function fakeVscode(withMcp: boolean, folders: { name: string; uri: { fsPath: string } }[] | null = TWO) {
  const settings: Record<string, unknown> = {};
  const configListeners: Listener[] = [];
  const folderListeners: (() => unknown)[] = [];
  const registered: { id: string; provider: { provideMcpServerDefinitions(): unknown[]; onDidChangeMcpServerDefinitions: (l: () => void) => unknown } }[] = [];
  const disposed: string[] = [];
  const vscode: VscodeLike = {
    workspace: {
      workspaceFolders: folders ?? undefined, // null: no folder open
      getConfiguration: (section: string) => ({
        get: <T>(key: string) => settings[`${section}.${key}`] as T | undefined,
      }),
      onDidChangeConfiguration: (listener: Listener) => {
        configListeners.push(listener);
        return { dispose: () => disposed.push('configuration') };
      },
      onDidChangeWorkspaceFolders: (listener: () => unknown) => {
        folderListeners.push(listener);
        return { dispose: () => disposed.push('folders') };
      },
    },
  };
  if (withMcp) {
    vscode.lm = {
      registerMcpServerDefinitionProvider: (id: string, provider: (typeof registered)[number]['provider']) => {
        registered.push({ id, provider });
        return { dispose: () => disposed.push('provider') };
      },
    };
    vscode.McpStdioServerDefinition = FakeDefinition;
  } else {
    vscode.lm = { selectChatModels: () => [] }; // 1.90's lm: no MCP
  }
  /** A setting changes: VS Code's event, to every listener. */
  const set = (key: string, value: unknown) => {
    settings[key] = value;
    for (const listener of configListeners) listener({ affectsConfiguration: (s) => key === s || key.startsWith(`${s}.`) });
  };
  return { vscode, set, registered, disposed, folderListeners };
}

const sidecar = {
  server: { command: '/venv/bin/python', args: ['-m', 's_code', 'serve'], source: 'setting' },
  env: { PATH: '/usr/bin', XDG_RUNTIME_DIR: '/run/user/1000', S_CODE_STATE_DIR: '/home/u/.s-code-state' },
  version: '0.1.0',
};

describe('mcpCommand: the same s-code, with mcp in place of serve', () => {
  it('keeps what comes before serve and drops serve\'s own options', () => {
    expect(mcpCommand({ command: '/usr/bin/s-code', args: ['serve'], source: 'PATH' })).toEqual({
      command: '/usr/bin/s-code',
      args: ['mcp'],
    });
    expect(mcpCommand({ command: '/py', args: ['-m', 's_code', 'serve', '--log-level', 'debug'], source: 'setting' })).toEqual({
      command: '/py',
      args: ['-m', 's_code', 'mcp'],
    });
  });

  it('offers nothing for a command without serve (a wrapper of the user\'s)', () => {
    expect(mcpCommand({ command: '/opt/my-s-code-wrapper', args: [], source: 'setting' })).toBeUndefined();
  });
});

describe('linkEnv: where the sidecar put its agent socket', () => {
  it('passes XDG_RUNTIME_DIR and S_CODE_STATE_DIR as the sidecar got them, and removes them when it had none', () => {
    expect(linkEnv(sidecar.env)).toEqual({ XDG_RUNTIME_DIR: '/run/user/1000', S_CODE_STATE_DIR: '/home/u/.s-code-state' });
    // null removes the variable from the extension host's environment the server would inherit
    expect(linkEnv({ PATH: '/usr/bin', XDG_RUNTIME_DIR: '' })).toEqual({ XDG_RUNTIME_DIR: null, S_CODE_STATE_DIR: null });
  });
});

describe('offerMcpServer: s-code among VS Code\'s MCP servers', () => {
  it('registers the provider under the id package.json declares, with the setting (default on)', () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8'));
    expect(manifest.contributes.mcpServerDefinitionProviders.map((p: { id: string }) => p.id)).toEqual([PROVIDER_ID]);
    const setting = manifest.contributes.configuration.properties[`sCode.${ENABLED_SETTING}`];
    expect(setting).toMatchObject({ type: 'boolean', default: true });
    const { vscode, registered } = fakeVscode(true);
    const offer = offerMcpServer(vscode, sidecar);
    expect('provider' in offer).toBe(true);
    expect(registered.map((r) => r.id)).toEqual([PROVIDER_ID]);
  });

  it('defines one stdio server per workspace folder: s-code mcp --workspace <folder>, the sidecar\'s link env', () => {
    const { vscode, registered } = fakeVscode(true);
    offerMcpServer(vscode, sidecar);
    const defs = registered[0].provider.provideMcpServerDefinitions() as FakeDefinition[];
    expect(defs.every((d) => d instanceof FakeDefinition)).toBe(true);
    expect(defs.map((d) => ({ ...d }))).toEqual([
      {
        label: 's-code: app',
        command: '/venv/bin/python',
        args: ['-m', 's_code', 'mcp', '--workspace', '/home/u/app'],
        env: { XDG_RUNTIME_DIR: '/run/user/1000', S_CODE_STATE_DIR: '/home/u/.s-code-state' },
        version: '0.1.0',
        cwd: { fsPath: '/home/u/app', scheme: 'file' },
      },
      {
        label: 's-code: lib',
        command: '/venv/bin/python',
        args: ['-m', 's_code', 'mcp', '--workspace', '/home/u/lib'],
        env: { XDG_RUNTIME_DIR: '/run/user/1000', S_CODE_STATE_DIR: '/home/u/.s-code-state' },
        version: '0.1.0',
        cwd: { fsPath: '/home/u/lib', scheme: 'file' },
      },
    ]);
  });

  it('a single folder is plain "s-code"; no folder, no server', () => {
    const one = fakeVscode(true, [{ name: 'app', uri: { fsPath: '/a' } }]);
    offerMcpServer(one.vscode, sidecar);
    expect((one.registered[0].provider.provideMcpServerDefinitions() as FakeDefinition[]).map((d) => d.label)).toEqual(['s-code']);
    const none = fakeVscode(true, null);
    offerMcpServer(none.vscode, sidecar);
    expect(none.registered[0].provider.provideMcpServerDefinitions()).toEqual([]);
  });

  it('sCode.mcpServer.enabled: off, no server and VS Code is told; on again, the servers are back', () => {
    const { vscode, set, registered } = fakeVscode(true);
    offerMcpServer(vscode, sidecar);
    const { provider } = registered[0];
    let told = 0;
    provider.onDidChangeMcpServerDefinitions(() => told++);
    set('sCode.permissionMode', 'workspace'); // another setting: nothing to refresh
    expect(told).toBe(0);
    set('sCode.mcpServer.enabled', false);
    expect(told).toBe(1);
    expect(provider.provideMcpServerDefinitions()).toEqual([]);
    set('sCode.mcpServer.enabled', true);
    expect(told).toBe(2);
    expect(provider.provideMcpServerDefinitions()).toHaveLength(2);
  });

  it('a change of workspace folders tells VS Code too; the listener can be disposed', () => {
    const { vscode, registered, folderListeners } = fakeVscode(true);
    offerMcpServer(vscode, sidecar);
    let told = 0;
    const handle = registered[0].provider.onDidChangeMcpServerDefinitions(() => told++) as { dispose(): void };
    for (const listener of folderListeners) listener();
    expect(told).toBe(1);
    handle.dispose();
    for (const listener of folderListeners) listener();
    expect(told).toBe(1);
  });

  it('disposing the offer unregisters the provider and its listeners', () => {
    const { vscode, disposed } = fakeVscode(true);
    const offer = offerMcpServer(vscode, sidecar);
    if (!('disposables' in offer)) throw new Error('not offered');
    for (const d of offer.disposables) d.dispose();
    expect(disposed.sort()).toEqual(['configuration', 'folders', 'provider']);
  });

  it('a server command without serve: registered, but no server is defined', () => {
    const { vscode, registered } = fakeVscode(true);
    offerMcpServer(vscode, { ...sidecar, server: { command: '/opt/wrapper', args: [], source: 'setting' } });
    expect(registered[0].provider.provideMcpServerDefinitions()).toEqual([]);
  });
});

describe('feature detection: an older VS Code without the MCP API', () => {
  it('is skipped with a reason, registers nothing and listens to nothing', () => {
    const { vscode, registered, folderListeners } = fakeVscode(false);
    const offer = offerMcpServer(vscode, sidecar);
    expect(offer).toEqual({ skipped: expect.stringContaining('no MCP server API') });
    expect(registered).toEqual([]);
    expect(folderListeners).toEqual([]);
  });

  it('needs both lm.registerMcpServerDefinitionProvider and McpStdioServerDefinition', () => {
    const register = () => ({ dispose() {} });
    expect(detectMcpApi({})).toBeUndefined();
    expect(detectMcpApi({ lm: undefined, McpStdioServerDefinition: FakeDefinition })).toBeUndefined();
    expect(detectMcpApi({ lm: { registerMcpServerDefinitionProvider: register } })).toBeUndefined();
    expect(detectMcpApi({ lm: { registerMcpServerDefinitionProvider: 'no' }, McpStdioServerDefinition: FakeDefinition })).toBeUndefined();
    expect(detectMcpApi({ lm: { registerMcpServerDefinitionProvider: register }, McpStdioServerDefinition: FakeDefinition })).toBeDefined();
  });
});
