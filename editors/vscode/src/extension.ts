// s-code for VS Code: starts the sidecar over stdio, answers approval cards with a modal, shows the
// mode and sandbox tier, streams command output, and exports callTool for agent extensions.
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
import * as methods from './common/methods';
import { Backoff } from './common/restart';
import { type HostView, hostActions, hostItems, pendingCount } from './common/hosts';
import { planLines, statusText } from './common/status';

let client: LanguageClient | undefined;

/** Declares experimental.sCode.approvalCards, so the server sends cards instead of messages. */
const approvalCards: StaticFeature = {
  fillClientCapabilities(capabilities) {
    const experimental = (capabilities.experimental ?? {}) as Record<string, unknown>;
    capabilities.experimental = { ...experimental, sCode: { approvalCards: true } };
  },
  initialize() {},
  getState() {
    return { kind: 'static' };
  },
  clear() {},
};

const vscodeUi: AskUi = {
  async modal(message, detail, actions) {
    return vscode.window.showWarningMessage(message, { modal: true, detail }, ...actions);
  },
  async openReadOnly(_title, markdown) {
    const doc = await vscode.workspace.openTextDocument({ language: 'markdown', content: markdown });
    await vscode.window.showTextDocument(doc, { preview: true, preserveFocus: false });
  },
  async openDiff(text) {
    const doc = await vscode.workspace.openTextDocument({ language: 'diff', content: text });
    await vscode.window.showTextDocument(doc, { preview: false, viewColumn: vscode.ViewColumn.Beside });
  },
};

function serverCommand(): { command: string; args: string[] } {
  const configured = vscode.workspace.getConfiguration('sCode').get<string[]>('server.command') ?? [];
  if (configured.length > 0) {
    return { command: configured[0], args: configured.slice(1) };
  }
  return { command: 's-code', args: ['serve'] };
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
  };

  const { command, args } = serverCommand();
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
  client.onNotification(methods.PLAN_UPDATED, (params) => {
    plan = planLines(params);
  });
  client.onNotification(methods.COMMAND_OUTPUT, (params: { text: string }) => {
    commands.append(params.text);
  });
  client.onNotification(methods.HOST_PROCESSES_UPDATED, (params: HostView) => {
    hosts = params;
    refresh();
  });
  await client.start();
  const caps = client.initializeResult?.capabilities.experimental as
    | { sCode?: { sandboxTier?: number } }
    | undefined;
  tier = caps?.sCode?.sandboxTier;
  mode = (await client.sendRequest<{ mode: string }>(methods.PERMISSION_MODE_GET, {})).mode;
  refresh();

  const show = async (markdown: string) => {
    const doc = await vscode.workspace.openTextDocument({ language: 'markdown', content: markdown });
    await vscode.window.showTextDocument(doc, { preview: true });
  };
  const request = <T>(method: string, params: unknown) => client!.sendRequest<T>(method, params);
  context.subscriptions.push(
    output,
    commands,
    status,
    vscode.commands.registerCommand('sCode.setMode', async (picked?: string) => {
      const choice = picked ?? (await vscode.window.showQuickPick([...methods.MODES], { placeHolder: `now: ${mode}` }));
      if (choice) {
        mode = (await request<{ mode: string }>(methods.PERMISSION_MODE_SET, { mode: choice })).mode;
        refresh();
      }
    }),
    vscode.commands.registerCommand('sCode.undoTurn', async (turnId?: string) => {
      const turn = turnId ?? (await vscode.window.showInputBox({ prompt: 'Turn id to undo' }));
      if (turn) {
        const r = await request<{ restored: string[]; refused: { path: string }[] }>(methods.TURN_UNDO, { turnId: turn });
        vscode.window.showInformationMessage(`s-code: restored ${r.restored.length}, refused ${r.refused.length}`);
      }
    }),
    vscode.commands.registerCommand('sCode.showPlan', () => show(plan.join('\n'))),
    vscode.commands.registerCommand('sCode.sandboxPreview', async () => {
      const line = await vscode.window.showInputBox({ prompt: 'Command to preview' });
      if (line) {
        const r = await request<{ card: { text: string } }>(methods.SANDBOX_PREVIEW, {
          command: line.split(/\s+/).filter(Boolean),
        });
        await show(r.card.text); // the server's rendering of the card, as every face shows it
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
    vscode.commands.registerCommand('sCode.listTools', async () => {
      const r = await request<{ tools: { name: string; description: string }[] }>(methods.TOOLS_LIST, {});
      await show(['# s-code tools', '', ...r.tools.map((t) => `- **${t.name}**: ${t.description}`)].join('\n'));
    }),
  );
  return {
    /** Call an s-code tool by name: what an agent extension uses instead of speaking JSON-RPC. */
    callTool: (name: string, args: unknown) => request<unknown>(methods.TOOLS_CALL, { name, arguments: args }),
    status: () => ({ mode, tier, text: status.text }),
  };
}

export async function deactivate() {
  await client?.stop();
}
