// The embedded agent of the end-to-end test: reads the active editor's file through s-code (the
// unsaved buffer's revision) and replaces its first line, through s-code's callTool API only.
const vscode = require('vscode');

exports.activate = (context) => {
  context.subscriptions.push(
    vscode.commands.registerCommand('sCodeAgent.editActiveFile', async () => {
      const sCode = await vscode.extensions.getExtension('s-code.s-code').activate();
      const doc = vscode.window.activeTextEditor.document;
      const path = vscode.workspace.asRelativePath(doc.uri);
      try {
        const read = await sCode.callTool('read_file', { path });
        const result = await sCode.callTool('apply_patch', {
          files: [{ path, expected_revision: read.revision, edits: [{ start_line: 1, end_line: 1, new_text: 'EDITED BY THE AGENT' }] }],
        });
        vscode.window.showInformationMessage(`agent: applied via ${result.applied[0].via} (read from ${read.source})`);
      } catch (err) {
        vscode.window.showErrorMessage(`agent: ${err.data ? err.data.kind : ''} ${err.message}`);
      }
    }),
  );
};
