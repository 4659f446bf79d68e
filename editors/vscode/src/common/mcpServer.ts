// s-code as one of VS Code's own MCP servers (agent mode, the MCP server list): per workspace
// folder, `s-code mcp --workspace <folder>` run by the same s-code the extension started as its
// sidecar, with the environment that leads it to that sidecar's agent socket (XDG_RUNTIME_DIR,
// S_CODE_STATE_DIR), so it attaches: its calls run in the editor's session and the s-code modal
// asks, naming the agent. The setting sCode.mcpServer.enabled (default on) turns it off.
// Pure logic: VS Code's MCP API (1.101+) is reached through McpApi, detected at run time, so an
// older VS Code activates without it.
import type { ServerCommand } from './server';

/** The provider's id, as package.json's contributes.mcpServerDefinitionProviders declares it. */
export const PROVIDER_ID = 's-code';
export const ENABLED_SETTING = 'mcpServer.enabled';
/** What decides where `s-code mcp` looks for the sidecar's agent socket. */
export const LINK_ENV = ['XDG_RUNTIME_DIR', 'S_CODE_STATE_DIR'] as const;

export interface Folder<U> {
  name: string;
  /** The folder's file system path. */
  path: string;
  uri: U;
}

/** One McpStdioServerDefinition, before VS Code's class is made from it. */
export interface McpServerSpec<U> {
  label: string;
  command: string;
  args: string[];
  /** Over the extension host's environment; null removes a variable. */
  env: Record<string, string | null>;
  cwd: U;
  version: string;
}

/** `s-code mcp` from the sidecar's command: the arguments before its `serve` (an interpreter's
 * `-m s_code`, say), then `mcp`; the options after `serve` are serve's and are left out.
 * Undefined when the command has no `serve` to replace (a wrapper script of the user's). */
export function mcpCommand(server: ServerCommand): { command: string; args: string[] } | undefined {
  const at = server.args.lastIndexOf('serve');
  if (at < 0) return undefined;
  return { command: server.command, args: [...server.args.slice(0, at), 'mcp'] };
}

/** The sidecar's XDG_RUNTIME_DIR and S_CODE_STATE_DIR, as it got them (unset: removed). */
export function linkEnv(env: Record<string, string | undefined>): Record<string, string | null> {
  return Object.fromEntries(LINK_ENV.map((name) => [name, env[name] || null]));
}

export interface McpState<U> {
  enabled: boolean;
  /** The command the sidecar runs. */
  server: ServerCommand;
  /** The sidecar's environment. */
  env: Record<string, string | undefined>;
  folders: readonly Folder<U>[];
  /** The extension's version: a new one tells VS Code the tools may have changed. */
  version: string;
}

/** One definition per workspace folder; none when turned off or without a `serve` to replace. */
export function mcpServerSpecs<U>(state: McpState<U>): McpServerSpec<U>[] {
  const run = state.enabled ? mcpCommand(state.server) : undefined;
  if (!run) return [];
  const env = linkEnv(state.env);
  return state.folders.map((folder) => ({
    label: state.folders.length === 1 ? 's-code' : `s-code: ${folder.name}`,
    command: run.command,
    args: [...run.args, '--workspace', folder.path],
    env,
    cwd: folder.uri,
    version: state.version,
  }));
}

export interface Disposable {
  dispose(): unknown;
}

/** VS Code's Event<void>. */
export type Event = (listener: () => unknown, thisArgs?: unknown, disposables?: Disposable[]) => Disposable;

export interface Provider<D> {
  onDidChangeMcpServerDefinitions: Event;
  provideMcpServerDefinitions(): D[];
}

/** The part of VS Code's MCP API the provider needs. */
export interface McpApi<U, D> {
  register(id: string, provider: Provider<D>): Disposable;
  definition(spec: McpServerSpec<U>): D;
}

interface McpStdioServerDefinitionClass {
  new (label: string, command: string, args?: string[], env?: Record<string, string | null>, version?: string): {
    cwd?: unknown;
  };
}

/** VS Code's MCP API when this VS Code has it (vscode.lm.registerMcpServerDefinitionProvider and
 * vscode.McpStdioServerDefinition, 1.101+), else undefined. */
export function detectMcpApi<U>(vscodeApi: unknown): McpApi<U, unknown> | undefined {
  const api = vscodeApi as {
    lm?: { registerMcpServerDefinitionProvider?: (id: string, provider: unknown) => Disposable };
    McpStdioServerDefinition?: McpStdioServerDefinitionClass;
  };
  const lm = api.lm;
  const Definition = api.McpStdioServerDefinition;
  if (typeof lm?.registerMcpServerDefinitionProvider !== 'function' || typeof Definition !== 'function') {
    return undefined;
  }
  return {
    register: (id, provider) => lm.registerMcpServerDefinitionProvider!(id, provider),
    definition: (spec) => {
      const made = new Definition(spec.label, spec.command, spec.args, spec.env, spec.version);
      made.cwd = spec.cwd;
      return made;
    },
  };
}

/** The provider VS Code asks for s-code's MCP servers; changed() tells VS Code to ask again. */
export class SCodeMcpProvider<U, D> implements Provider<D> {
  private readonly listeners = new Set<() => unknown>();

  constructor(
    private readonly api: McpApi<U, D>,
    private readonly state: () => McpState<U>,
  ) {}

  readonly onDidChangeMcpServerDefinitions: Event = (listener, thisArgs, disposables) => {
    const bound = () => listener.call(thisArgs);
    this.listeners.add(bound);
    const handle = { dispose: () => this.listeners.delete(bound) };
    disposables?.push(handle);
    return handle;
  };

  provideMcpServerDefinitions(): D[] {
    return mcpServerSpecs(this.state()).map((spec) => this.api.definition(spec));
  }

  changed(): void {
    for (const listener of [...this.listeners]) listener();
  }
}

/** What the offer needs of the `vscode` module: its MCP API when present, and the workspace. */
export interface VscodeLike {
  lm?: unknown;
  McpStdioServerDefinition?: unknown;
  workspace: {
    readonly workspaceFolders?: readonly { readonly name: string; readonly uri: { readonly fsPath: string } }[];
    getConfiguration(section: string): { get<T>(key: string): T | undefined };
    onDidChangeConfiguration(listener: (e: { affectsConfiguration(section: string): boolean }) => unknown): Disposable;
    onDidChangeWorkspaceFolders(listener: () => unknown): Disposable;
  };
}

export interface Sidecar {
  /** The command the sidecar runs. */
  server: ServerCommand;
  /** The environment it was started with. */
  env: Record<string, string | undefined>;
  /** The extension's version. */
  version: string;
}

export type Offer =
  | { provider: SCodeMcpProvider<unknown, unknown>; disposables: Disposable[] }
  | { skipped: string };

/** Offers s-code to VS Code's MCP support: the provider registered, told to refresh when
 * sCode.mcpServer.enabled or the workspace folders change. Skipped (with the reason, for the log)
 * where VS Code has no MCP server API. */
export function offerMcpServer(vscodeApi: VscodeLike, sidecar: Sidecar, log: (line: string) => void = () => {}): Offer {
  const api = detectMcpApi<unknown>(vscodeApi);
  if (!api) return { skipped: 'this VS Code has no MCP server API (1.101 and later have it)' };
  const { workspace } = vscodeApi;
  const enabled = () => workspace.getConfiguration('sCode').get<boolean>(ENABLED_SETTING) ?? true;
  const provider = new SCodeMcpProvider(api, () => ({
    enabled: enabled(),
    server: sidecar.server,
    env: sidecar.env,
    folders: (workspace.workspaceFolders ?? []).map((f) => ({ name: f.name, path: f.uri.fsPath, uri: f.uri })),
    version: sidecar.version,
  }));
  const disposables = [
    api.register(PROVIDER_ID, provider),
    workspace.onDidChangeConfiguration((e) => {
      if (!e.affectsConfiguration(`sCode.${ENABLED_SETTING}`)) return;
      log(`s-code: sCode.${ENABLED_SETTING} is ${enabled()}: VS Code is told the MCP servers changed`);
      provider.changed();
    }),
    workspace.onDidChangeWorkspaceFolders(() => provider.changed()),
  ];
  return { provider, disposables };
}
