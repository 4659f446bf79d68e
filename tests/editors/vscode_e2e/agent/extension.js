// The embedded agent of the end-to-end test: it reads and edits the active editor's file and runs
// commands through s-code's callTool API, lists and calls s-code's tools through VS Code's own MCP
// support, and says what happened in a notification.
const vscode = require('vscode');

async function sCode() {
  return vscode.extensions.getExtension('s-code.s-code').activate();
}

async function editFirstLine(api, doc, text) {
  const path = vscode.workspace.asRelativePath(doc.uri);
  const read = await api.callTool('read_file', { path });
  const result = await api.callTool('apply_patch', {
    files: [{ path, expected_revision: read.revision, edits: [{ start_line: 1, end_line: 1, new_text: text }] }],
  });
  return { path, read, result };
}

function report(err) {
  vscode.window.showErrorMessage(`agent: ${err.data ? err.data.kind : ''} ${err.message}`);
}

// VS Code's own MCP support: s-code's server, as the s-code extension's provider defines it (the
// definition's id is the extension's id and the label), started by VS Code; its tools as
// vscode.lm.tools lists them, invoked with vscode.lm.invokeTool outside a chat.
const S_CODE_MCP_SERVER = 's-code.s-code/s-code';

async function mcpTools() {
  await vscode.commands.executeCommand('workbench.mcp.startServer', S_CODE_MCP_SERVER, { waitForLiveTools: true });
  return vscode.lm.tools.filter((t) => t.name.startsWith('mcp_s-code_')).map((t) => t.name);
}

async function mcpCall(name, input) {
  await mcpTools();
  const result = await vscode.lm.invokeTool(`mcp_s-code_${name}`, { input, toolInvocationToken: undefined });
  return result.content.map((part) => (part instanceof vscode.LanguageModelTextPart ? part.value : JSON.stringify(part))).join('\n');
}

exports.activate = (context) => {
  context.subscriptions.push(
    vscode.commands.registerCommand('sCodeAgent.editActiveFile', async () => {
      const api = await sCode();
      try {
        const { read, result } = await editFirstLine(api, vscode.window.activeTextEditor.document, 'EDITED BY THE AGENT');
        vscode.window.showInformationMessage(`agent: applied via ${result.applied[0].via} (read from ${read.source})`);
      } catch (err) {
        report(err);
      }
    }),
    // An edit of b.txt a moment later: its approval arrives while the user types in a.txt.
    vscode.commands.registerCommand('sCodeAgent.editOtherFileSoon', async () => {
      const api = await sCode();
      await new Promise((resolve) => setTimeout(resolve, 2500));
      try {
        const b = await vscode.workspace.openTextDocument(vscode.Uri.joinPath(vscode.workspace.workspaceFolders[0].uri, 'b.txt'));
        await editFirstLine(api, b, 'SNEAKED IN BY A STRAY KEY');
        vscode.window.showInformationMessage('agent: the stray-key edit was applied');
      } catch (err) {
        report(err);
      }
    }),
    vscode.commands.registerCommand('sCodeAgent.mcpList', async () => {
      try {
        vscode.window.showInformationMessage(`agent: MCP tools: ${(await mcpTools()).join(' ') || 'none'}`);
      } catch (err) {
        report(err);
      }
    }),
    vscode.commands.registerCommand('sCodeAgent.mcpRead', async () => {
      try {
        vscode.window.showInformationMessage(`agent: MCP read: ${await mcpCall('read_file', { path: 'b.txt' })}`);
      } catch (err) {
        report(err);
      }
    }),
    vscode.commands.registerCommand('sCodeAgent.mcpCreate', async () => {
      try {
        const files = [{ path: 'c.txt', expected_revision: null, content: 'written over MCP\n' }];
        vscode.window.showInformationMessage(`agent: MCP edit: ${await mcpCall('apply_patch', { files })}`);
      } catch (err) {
        report(err);
      }
    }),
    // The user turns s-code's MCP server off (as the Settings editor would: the configuration API);
    // then what VS Code lists of s-code's tools, once they are gone (or after 15 s).
    vscode.commands.registerCommand('sCodeAgent.mcpOff', async () => {
      await vscode.workspace.getConfiguration('sCode').update('mcpServer.enabled', false, vscode.ConfigurationTarget.Global);
      const listed = () => vscode.lm.tools.filter((t) => t.name.startsWith('mcp_s-code_')).map((t) => t.name);
      for (const until = Date.now() + 15000; listed().length > 0 && Date.now() < until; ) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      vscode.window.showInformationMessage(`agent: sCode.mcpServer.enabled is off; MCP tools: ${listed().join(' ') || 'none'}`);
    }),
    vscode.commands.registerCommand('sCodeAgent.plan', async () => {
      const api = await sCode();
      const plan = [
        { step: 'Write the fix', status: 'completed' },
        { step: 'Run the tests', status: 'in_progress' },
      ];
      await api.callTool('update_plan', { plan });
      vscode.window.showInformationMessage('agent: the plan is set');
    }),
    // Fix the file in its (unsaved) editor, then run a command that reads it from disk.
    vscode.commands.registerCommand('sCodeAgent.editThenRun', async () => {
      const api = await sCode();
      try {
        const { path } = await editFirstLine(api, vscode.window.activeTextEditor.document, 'FIXED BY THE AGENT');
        const run = await api.callTool('run_command', { command: ['head', '-n', '1', path] });
        vscode.window.showInformationMessage(`agent: the command saw: ${run.output.trim()}`);
      } catch (err) {
        report(err);
      }
    }),
  );
};
