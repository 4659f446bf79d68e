// s-code for VS Code: starts the sidecar over stdio, answers approval cards with a modal, shows the
// mode and sandbox tier, streams command output and code mode's child calls, exports callTool
// for agent extensions, and offers `s-code mcp` (attached to the sidecar) to VS Code's own MCP
// support.
import * as os from 'node:os';
import * as vscode from 'vscode';
import {
  CloseAction,
  ErrorAction,
  LanguageClient,
  type LanguageClientOptions,
  type ServerOptions,
  type StaticFeature,
} from 'vscode-languageclient/node';

import { type AskUi, type Card, decide } from './common/approval';
import { SCHEME } from './common/details';
import { Details, PlanTree } from './views';
import * as methods from './common/methods';
import { Backoff } from './common/restart';
import { type ServerCommand, resolveServer } from './common/server';
import { type HostView, hostActions, hostItems, pendingCount } from './common/hosts';
import { type Offer, mcpCommand, offerMcpServer } from './common/mcpServer';
import { CodeModeView, type ToolCallNote } from './common/codeMode';
import { type TerminalEntry, type TerminalNote, TerminalStreams, channelName, terminalActions, terminalItems } from './common/terminals';
import {
  type CommandStatus,
  MODE_DESCRIPTIONS,
  type Turn,
  commandStatusLine,
  planLines,
  statusText,
  statusTooltip,
  turnItems,
} from './common/status';

let client: LanguageClient | undefined;

/** Declares experimental.sCode: approval cards instead of messages, and (setting
 * sCode.saveBeforeRun, on by default) saving the agent's edits before a command or git reads. */
const approvalCards: StaticFeature = {
  fillClientCapabilities(capabilities) {
    const experimental = (capabilities.experimental ?? {}) as Record<string, unknown>;
    const saveDocuments = vscode.workspace.getConfiguration('sCode').get<boolean>('saveBeforeRun') ?? true;
    capabilities.experimental = { ...experimental, sCode: { approvalCards: true, saveDocuments } };
  },
  initialize() {},
  getState() {
    return { kind: 'static' };
  },
  clear() {},
};

const details = new Details();

const vscodeUi: AskUi = {
  async modal(message, detail, actions) {
    // Deny comes first: the dialog's primary button, which Enter presses. (Marked as the close
    // affordance it would become the Cancel button, and "Show details" the primary.) Escape and
    // the Cancel button VS Code adds answer nothing: a denial too.
    return (await vscode.window.showWarningMessage(message, { modal: true, detail }, ...actions.map((title) => ({ title }))))
      ?.title;
  },
  async openReadOnly(kind, markdown) {
    await details.show(kind, markdown);
  },
  async openDiff(card) {
    await details.showDiffs(card);
  },
};

function serverCommand(): ServerCommand {
  const configured = vscode.workspace.getConfiguration('sCode').get<string[]>('server.command') ?? [];
  return resolveServer(configured, {
    env: process.env,
    home: os.homedir(),
    folders: (vscode.workspace.workspaceFolders ?? []).map((folder) => folder.uri.fsPath),
    pythonInterpreter: vscode.workspace.getConfiguration('python').get<string>('defaultInterpreterPath'),
  });
}

export async function activate(context: vscode.ExtensionContext) {
  const output = vscode.window.createOutputChannel('s-code', { log: true });
  const commands = vscode.window.createOutputChannel('s-code commands');
  const status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 100);
  status.command = 'sCode.setMode';
  status.text = statusText(undefined, undefined);
  status.show();
  let mode: string | undefined;
  let tier: number | undefined;
  let plan: string[] = ['# s-code plan', '', '(no plan yet)'];
  let hosts: HostView | undefined;
  const refresh = () => {
    status.text = statusText(mode, tier, pendingCount(hosts));
    status.tooltip = new vscode.MarkdownString(statusTooltip(mode, tier));
  };

  const server = serverCommand();
  const { command, args, source } = server;
  const sidecarEnv = { ...process.env }; // what the language client gives the server
  output.info(`s-code: starting ${command} ${args.join(' ')} (found: ${source})`);
  const serverOptions: ServerOptions = { command, args };
  const backoff = new Backoff();
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: 'file' }, { scheme: 'untitled' }],
    outputChannel: output,
    initializationOptions: {
      permissionMode: vscode.workspace.getConfiguration('sCode').get<string>('permissionMode') ?? 'manual',
    },
    errorHandler: {
      error: () => ({ action: ErrorAction.Continue }),
      closed: async () => {
        const delay = backoff.next(Date.now());
        if (delay === undefined) {
          output.appendLine('s-code: the server keeps crashing; not restarting it');
          return { action: CloseAction.DoNotRestart };
        }
        output.appendLine(`s-code: the server stopped; restarting in ${delay} ms`);
        await new Promise((resolve) => setTimeout(resolve, delay));
        return { action: CloseAction.Restart };
      },
    },
  };
  client = new LanguageClient('sCode', 's-code', serverOptions, clientOptions);
  client.registerFeature(approvalCards);
  // Handlers go in before start(): the server may ask as soon as it is initialized.
  client.onRequest(methods.APPROVAL_REQUEST, async (params: { card: Card }) => ({
    decision: await decide(params.card, vscodeUi),
  }));
  const planTree = new PlanTree();
  client.onNotification(methods.PLAN_UPDATED, (params) => {
    plan = planLines(params);
    planTree.update(params);
  });
  client.onNotification(methods.COMMAND_OUTPUT, (params: { text: string }) => {
    commands.append(params.text);
  });
  client.onNotification(methods.COMMAND_STATUS, (params: CommandStatus) => {
    commands.appendLine(commandStatusLine(params));
    if (params.state === 'running') commands.show(true); // revealed, the focus stays
  });
  // Save-before-run: the buffers the agent edited, written before a command or git reads them.
  client.onRequest(methods.DOCUMENTS_SAVE, async (params: { uris: string[] }) => {
    const saved: string[] = [];
    for (const uri of params.uris) {
      const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri);
      if (doc?.isDirty && (await doc.save())) saved.push(uri);
    }
    return { saved };
  });
  const codeMode = new CodeModeView();
  client.onNotification(methods.CODE_MODE_TOOL_CALL, (params: ToolCallNote) => {
    for (const line of codeMode.lines(params)) commands.appendLine(line);
  });
  client.onNotification(methods.HOST_PROCESSES_UPDATED, (params: HostView) => {
    hosts = params;
    refresh();
  });
  // A background terminal's stream, in an output view of its own.
  const streams = new TerminalStreams();
  const terminalViews = new Map<string, vscode.OutputChannel>();
  const terminalView = (id: string) => {
    let view = terminalViews.get(id);
    if (!view) {
      view = vscode.window.createOutputChannel(channelName(id));
      terminalViews.set(id, view);
      context.subscriptions.push(view);
    }
    return view;
  };
  client.onNotification(methods.TERMINAL_OUTPUT, (params: TerminalNote) => {
    const text = streams.accept(params);
    if (text) terminalView(params.terminalId).append(text);
  });
  try {
    await client.start();
  } catch (err) {
    // no server: say so, with a way to fix it, instead of "starting" forever
    status.text = '$(error) s-code: not running';
    status.tooltip = `s-code could not start \`${command}\` (${String(err)}). Click to fix.`;
    status.command = 'sCode.fixServer';
    context.subscriptions.push(
      status,
      output,
      vscode.commands.registerCommand('sCode.fixServer', () => fixServer(command)),
    );
    void vscode.window.showErrorMessage(`s-code is not running: \`${command}\` could not start.`, 'Fix…').then(
      (pick) => pick && fixServer(command),
    );
    return undefined;
  }
  const caps = client.initializeResult?.capabilities.experimental as
    | { sCode?: { sandboxTier?: number } }
    | undefined;
  tier = caps?.sCode?.sandboxTier;
  mode = (await client.sendRequest<{ mode: string }>(methods.PERMISSION_MODE_GET, {})).mode;
  refresh();
  const plan0 = await client.sendRequest<{ plan?: { step: string; status: string }[] }>(methods.PLAN_GET, {});
  plan = planLines(plan0); // kept by the server across restarts
  planTree.update(plan0);
  offerMcp(context, output, server, sidecarEnv);

  const show = (kind: string, markdown: string) => details.show(kind, markdown);
  const request = <T>(method: string, params: unknown) => client!.sendRequest<T>(method, params);
  context.subscriptions.push(
    output,
    commands,
    status,
    vscode.workspace.registerTextDocumentContentProvider(SCHEME, details),
    vscode.window.registerTreeDataProvider('sCode.plan', planTree),
    vscode.commands.registerCommand('sCode.setMode', async (picked?: string) => {
      const items = methods.MODES.map((m) => ({ label: m, description: MODE_DESCRIPTIONS[m] }));
      const choice = picked ?? (await vscode.window.showQuickPick(items, { placeHolder: `now: ${mode}` }))?.label;
      if (choice) {
        mode = (await request<{ mode: string }>(methods.PERMISSION_MODE_SET, { mode: choice })).mode;
        refresh();
      }
    }),
    vscode.commands.registerCommand('sCode.undoTurn', async (turnId?: string) => {
      let turn = turnId;
      if (!turn) {
        const { turns } = await request<{ turns: Turn[] }>(methods.TURN_LIST, {});
        const items = turnItems(turns);
        if (items.length === 0) {
          void vscode.window.showInformationMessage('s-code: no turn to undo');
          return;
        }
        turn = (await vscode.window.showQuickPick(items, { placeHolder: 'Undo the edits of which turn?' }))?.turnId;
      }
      if (turn) await undoTurn(turn);
    }),
    vscode.commands.registerCommand('sCode.showPlan', () => show('plan', plan.join('\n'))),
    vscode.commands.registerCommand('sCode.sandboxPreview', async () => {
      const line = await vscode.window.showInputBox({ prompt: 'Command to preview' });
      if (line) {
        const r = await request<{ card: { text: string } }>(methods.SANDBOX_PREVIEW, {
          command: line.split(/\s+/).filter(Boolean),
        });
        await show('sandbox-preview', r.card.text); // the server's rendering, as every face shows it
      }
    }),
    vscode.commands.registerCommand('sCode.hostProcesses', async () => {
      hosts = await request<HostView>(methods.HOST_PROCESSES_LIST, {});
      refresh();
      const picked = await vscode.window.showQuickPick(hostItems(hosts), {
        placeHolder: 'MCP servers: they run outside the sandbox, with your account\'s access',
      });
      if (!picked) return;
      const action = await vscode.window.showQuickPick(hostActions(picked.entry), { placeHolder: picked.label });
      const target = { kind: picked.entry.kind, name: picked.entry.name, layer: picked.entry.layer };
      if (action === 'Approve…') await request(methods.HOST_PROCESSES_APPROVE, target);
      if (action === 'Revoke') await request(methods.HOST_PROCESSES_REVOKE, target);
    }),
    vscode.commands.registerCommand('sCode.terminals', async () => {
      const call = { name: 'terminal_list', arguments: {} };
      const r = await request<{ terminals: TerminalEntry[] }>(methods.TOOLS_CALL, call);
      const picked = await vscode.window.showQuickPick(terminalItems(r.terminals), {
        placeHolder: 'Background terminals: they run outside the sandbox, with your account\'s access',
      });
      if (!picked) return;
      const action = await vscode.window.showQuickPick(terminalActions(picked.entry), { placeHolder: picked.label });
      if (action === 'Show output') terminalView(picked.entry.terminal_id).show(true);
      if (action === 'Kill') {
        const target = { kind: 'terminal', name: picked.entry.terminal_id };
        await request(methods.HOST_PROCESSES_REVOKE, target); // the whole tree, waited for
      }
    }),
    vscode.commands.registerCommand('sCode.listTools', async () => {
      const r = await request<{ tools: { name: string; description: string }[] }>(methods.TOOLS_LIST, {});
      await show('tools', ['# s-code tools', '', ...r.tools.map((t) => `- **${t.name}**: ${t.description}`)].join('\n'));
    }),
  );
  const undoTurn = async (turn: string) => {
    const r = await request<{ restored: string[]; refused: { path: string; reason: string }[] }>(methods.TURN_UNDO, {
      turnId: turn,
    });
    const refused = r.refused.map((x) => `${x.path} (${x.reason})`).join(', ');
    void vscode.window.showInformationMessage(
      `s-code: undid ${r.restored.length} file(s)${refused ? `; refused ${refused}` : ''}`,
    );
  };
  /** After each applied edit (asked or not): what changed, with an Undo. */
  const noticeEdit = (result: { applied?: { path: string; via: string }[]; turn_id?: string }) => {
    const applied = result.applied ?? [];
    if (applied.length === 0 || !result.turn_id) return;
    const names = applied.slice(0, 3).map((a) => a.path).join(', ') + (applied.length > 3 ? ', …' : '');
    const turn = result.turn_id;
    void vscode.window.showInformationMessage(`s-code edited ${names}`, 'Undo').then((pick) => {
      if (pick === 'Undo') void undoTurn(turn);
    });
  };
  return {
    /** Call an s-code tool by name: what an agent extension uses instead of speaking JSON-RPC. */
    callTool: async (name: string, args: unknown) => {
      const result = await request<unknown>(methods.TOOLS_CALL, { name, arguments: args ?? {} });
      if (name === 'apply_patch' && result && typeof result === 'object') noticeEdit(result);
      return result;
    },
    status: () => ({ mode, tier, text: status.text }),
  };
}

export async function deactivate() {
  await client?.stop();
}

/** s-code among VS Code's own MCP servers (agent mode): `s-code mcp --workspace <folder>` per
 * folder, run by the same s-code with the sidecar's XDG_RUNTIME_DIR and S_CODE_STATE_DIR, so it
 * attaches to this sidecar and the modal asks (src/common/mcpServer.ts). */
function offerMcp(
  context: vscode.ExtensionContext,
  output: vscode.LogOutputChannel,
  server: ServerCommand,
  env: Record<string, string | undefined>,
): void {
  const version = String((context.extension.packageJSON as { version?: string }).version ?? '');
  let offer: Offer;
  try {
    offer = offerMcpServer(vscode, { server, env, version }, (line) => output.info(line));
  } catch (err) {
    output.warn(`s-code: VS Code refused s-code's MCP server provider: ${String(err)}`);
    return;
  }
  if ('skipped' in offer) {
    output.info(`s-code: not offered as an MCP server: ${offer.skipped}`);
    return;
  }
  if (!mcpCommand(server)) {
    output.warn('s-code: the server command has no "serve" to turn into "mcp"; no MCP server is offered');
  }
  context.subscriptions.push(...offer.disposables);
}

/** No server could start: the setting to point at it, or how to install it. */
async function fixServer(command: string): Promise<void> {
  const pick = await vscode.window.showErrorMessage(
    `s-code could not start \`${command}\`. Install it (\`pipx install s-code\`, or a .venv in the workspace ` +
      'with s-code in it), or set sCode.server.command; then reload the window.',
    'Open Settings',
    'Reload Window',
  );
  if (pick === 'Open Settings') await vscode.commands.executeCommand('workbench.action.openSettings', 'sCode.server.command');
  if (pick === 'Reload Window') await vscode.commands.executeCommand('workbench.action.reloadWindow');
}
