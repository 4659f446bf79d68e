// Drives a real VS Code (code-server) in Debian's Chromium, as a user would, with a test agent
// extension that acts through s-code's callTool API. Steps (each prints "E2E <step>"):
//  1. the status bar shows the mode and the sandbox tier, with a tooltip that explains them;
//  2. the user types in a.txt without saving;
//  3. an approval (of an edit of b.txt) arrives while the user keeps typing in a.txt, Enter
//     included: the keystroke denies;
//  4. the agent's edit asks: the modal names the file with its +/- lines; "Show details" opens
//     VS Code's diff editor (no Untitled document); "Approve once" puts the edit in the unsaved
//     editor; the notice's "Undo" takes it back;
//  5. the agent fixes the file in its editor, then runs a command: the command sees the fix (the
//     editor was saved first), and the output view shows the run's header and exit line;
//  6. VS Code's own MCP support starts `s-code mcp` from the extension's provider, attached to this
//     window's sidecar, and lists its tools (vscode.lm.tools); a read-only tool invoked through
//     VS Code (vscode.lm.invokeTool) answers without a prompt; an edit asks VS Code's own
//     confirmation, then the s-code modal, which names the agent: Deny leaves no file, "Approve
//     once" writes it; sCode.mcpServer.enabled off takes the tools away and ends the process;
//  7. the server is killed: the extension restarts it, and the next call is answered;
//  8. with a server command that does not exist, the status bar says "not running", with a fix.
// Exits non-zero on the first failure. SHOTS: a folder for the screenshots (prompt, details, the
// prompt of an MCP call).
const fs = require('node:fs');
const path = require('node:path');
const { chromium } = require('playwright-core');

const { URL_BASE, WORKSPACE, SHOT, SHOTS, SETTINGS } = process.env;

/** SIGKILL the s-code server of this test (the process whose environment names its state). */
function killServer(stateDir) {
  let killed = 0;
  for (const pid of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      const env = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      if (argv.includes('s_code') && argv.includes('serve') && env.includes(`S_CODE_STATE_DIR=${stateDir}`)) {
        process.kill(Number(pid), 'SIGKILL');
        killed++;
      }
    } catch {
      // gone, or not ours
    }
  }
  if (killed !== 1) throw new Error(`expected one server to kill, found ${killed}`);
}

/** The `s-code mcp` processes serving `workspace` (VS Code starts them from the provider). */
function mcpServers(workspace) {
  const found = [];
  for (const pid of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      if (argv.includes('s_code') && argv.includes('mcp') && argv.includes(workspace)) found.push(Number(pid));
    } catch {
      // gone
    }
  }
  return found;
}

async function clearNotices(page) {
  await palette(page, 'Notifications: Clear All Notifications');
  await page.keyboard.press('Escape');
}

async function palette(page, command) {
  await page.keyboard.press('F1');
  await page.keyboard.type(command);
  await page.keyboard.press('Enter');
}

/** The text of a notification matching `pattern` (opening the notification center if needed). */
async function notice(page, pattern, timeout = 30000) {
  const said = page.locator('.notification-list-item').filter({ hasText: pattern }).first();
  try {
    await said.waitFor({ timeout });
  } catch (err) {
    await palette(page, 'Notifications: Show Notifications');
    await said.waitFor({ timeout: 5000 });
  }
  return said;
}

/** Focus a.txt's editor through its tab (a click in the text may land on an overlay). */
async function focusA(page) {
  await page.getByRole('tab', { name: /^a\.txt/ }).first().click();
  await page.waitForTimeout(300);
}

/** The editor's text from its top (only the lines on screen are in the page). */
async function editorText(editor) {
  await editor.page().keyboard.press('Control+Home');
  await editor.page().waitForTimeout(200);
  return (await editor.locator('.view-lines').innerText()).replace(/\u00a0/g, ' ');
}

async function main() {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run', '--disable-quic'],
  });
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  try {
    await page.goto(`${URL_BASE}/?folder=${WORKSPACE}`);
    const status = page.getByText(/s-code: manual · sandbox tier \d/);
    await status.waitFor({ timeout: 90000 });
    await status.hover();
    await page.getByText('asks before every edit and every command').first().waitFor({ timeout: 10000 });
    console.log('E2E status bar shows the mode and tier');

    await page.getByRole('treeitem', { name: 'a.txt' }).click();
    const editor = page.locator('.monaco-editor[data-uri$="a.txt"]').first();
    await editor.waitFor({ timeout: 30000 });
    await editor.locator('.view-lines').click();
    await page.keyboard.press('Control+End');
    await page.keyboard.type('\nuser typed this, unsaved');
    await editor.getByText('user typed this, unsaved').waitFor({ timeout: 10000 });
    await page.waitForTimeout(1000); // the keystrokes reach the extension host and the server
    console.log('E2E the user typed without saving');

    // 3. typing, Enter included, while the approval arrives
    await palette(page, 's-code agent: later, edit the other file');
    await focusA(page);
    await page.keyboard.press('Control+End');
    const dialog = page.locator('.monaco-dialog-box');
    const until = Date.now() + 12000;
    let typed = 0;
    const agentSaid = page.locator('.notification-list-item').filter({ hasText: /agent: / });
    while (Date.now() < until && (await agentSaid.count()) === 0) {
      await page.keyboard.type('k');
      await page.keyboard.press('Enter');
      typed++;
      await page.waitForTimeout(40);
    }
    const denied = await (await notice(page, /agent: /)).innerText();
    if (!denied.includes('approval_denied')) throw new Error(`the stray key did not deny: ${denied}`);
    // b.txt on disk is checked by the Python side (unchanged), and the audit log (denied)
    if (await dialog.isVisible()) throw new Error('the dialog stayed open');
    if (typed > 60) throw new Error(`${typed} keystrokes: Enter did not deny at once`);
    console.log(`E2E a stray Enter denied the approval (${typed} keystrokes typed meanwhile)`);
    await palette(page, 'Notifications: Clear All Notifications');
    await page.keyboard.press('Escape');

    // 4. ask, details in the diff editor, approve, undo
    await focusA(page);
    await palette(page, 's-code agent: edit the active file');
    await dialog.waitFor({ timeout: 30000 });
    const message = await dialog.innerText();
    if (!message.includes('Edit a.txt') || !message.includes('a.txt  +1 −1')) {
      throw new Error(`unexpected approval dialog: ${message}`);
    }
    if (SHOTS) await page.screenshot({ path: path.join(SHOTS, 'vscode-prompt.png') });
    console.log('E2E the approval modal asks: Edit a.txt, with its +/- lines');
    await dialog.getByRole('button', { name: 'Show details' }).click();
    const diff = page.locator('.monaco-diff-editor').first();
    await diff.waitFor({ timeout: 30000 });
    await page.getByRole('tab', { name: /a\.txt: proposed by s-code/ }).waitFor({ timeout: 10000 });
    if ((await page.getByRole('tab', { name: /Untitled/ }).count()) > 0) throw new Error('an Untitled editor opened');
    await dialog.waitFor({ timeout: 30000 }); // asked again after the details
    if (SHOTS) await page.screenshot({ path: path.join(SHOTS, 'vscode-details.png') });
    console.log('E2E the details open in the diff editor, read-only, no Untitled document');
    await dialog.getByRole('button', { name: 'Approve once' }).click();
    const applied = await (await notice(page, /agent: applied/)).innerText();
    if (!applied.includes('agent: applied via editor (read from buffer)')) throw new Error(applied);
    await focusA(page);
    const text = await editorText(editor);
    if (!text.includes('EDITED BY THE AGENT') || !text.includes('user typed this, unsaved')) {
      throw new Error(`editor text: ${text}`);
    }
    console.log('E2E the agent edit landed in the unsaved editor');
    const edited = await notice(page, /s-code edited a\.txt/);
    await edited.getByRole('button', { name: 'Undo' }).click();
    await (await notice(page, /s-code: undid 1 file/)).waitFor();
    await editor.page().keyboard.press('Control+Home');
    await editor.getByText('first line').waitFor({ timeout: 10000 });
    console.log('E2E the notice\'s Undo took the edit back');
    await palette(page, 'Notifications: Clear All Notifications');
    await page.keyboard.press('Escape');

    // 5. edit in the editor, then a command that reads the disk
    await focusA(page);
    await palette(page, 's-code agent: fix the file then run a command');
    for (const what of [/Edit a\.txt/, /Run .*head/]) {
      await dialog.filter({ hasText: what }).waitFor({ timeout: 30000 });
      await dialog.getByRole('button', { name: 'Approve once' }).click();
      await dialog.waitFor({ state: 'hidden', timeout: 10000 });
    }
    const saw = await (await notice(page, /agent: the command saw/)).innerText();
    if (!saw.includes('agent: the command saw: FIXED BY THE AGENT')) throw new Error(saw);
    // the output view (an editor: spaces are rendered as no-break spaces)
    await page.getByText(/\[exit[\s\u00a0]0,[\s\u00a0]\d+[\s\u00a0]ms\]/).first().waitFor({ timeout: 10000 });
    await page.getByText(/\$[\s\u00a0]\S*head[\s\u00a0]-n[\s\u00a0]1[\s\u00a0]a\.txt/).first().waitFor({ timeout: 10000 });
    console.log('E2E the command saw the agent edit (saved first); the output shows its header and exit');

    // the turns to undo come from the server, with their files
    await palette(page, 's-code: Undo Turn');
    await page.locator('.quick-input-list').getByText(/1 file: a\.txt/).first().waitFor({ timeout: 10000 });
    await page.keyboard.press('Escape');
    // the plan as a tree view that follows the agent
    await palette(page, 's-code agent: set the plan');
    await notice(page, /agent: the plan is set/);
    const planView = page.getByRole('button', { name: /s-code plan/i }).first();
    if ((await planView.getAttribute('aria-expanded')) !== 'true') await planView.click();
    await page.getByRole('treeitem', { name: /Run the tests/ }).waitFor({ timeout: 10000 });
    console.log('E2E the undo picker lists the turns; the plan shows as a live tree');

    // 6. s-code in VS Code's own MCP support, attached to this window's sidecar
    await clearNotices(page);
    const mcpStarted = Date.now();
    const took = []; // each part's time, for the log
    let last = mcpStarted;
    const lap = (what) => {
      took.push(`${what} ${Date.now() - last} ms`);
      last = Date.now();
    };
    await palette(page, 's-code agent: list the MCP tools');
    const listed = await (await notice(page, /agent: MCP tools/, 60000)).innerText();
    for (const tool of ['read_file', 'apply_patch', 'run_command', 'tool_search']) {
      if (!listed.includes(`mcp_s-code_${tool}`)) throw new Error(`VS Code does not list ${tool}: ${listed}`);
    }
    if (mcpServers(WORKSPACE).length !== 1) throw new Error(`s-code mcp processes: ${mcpServers(WORKSPACE)}`);
    lap('list');
    console.log('E2E VS Code started s-code mcp from the provider and lists its tools');
    await palette(page, 's-code agent: read b.txt over MCP');
    const read = await (await notice(page, /agent: MCP read/)).innerText();
    if (!read.includes('the other file') || (await dialog.isVisible())) throw new Error(`read over MCP: ${read}`);
    lap('read');
    console.log('E2E a read-only tool invoked through VS Code answers without a prompt');
    const created = path.join(WORKSPACE, 'c.txt');
    for (const [button, outcome] of [['Deny', /approval_denied/], ['Approve once', /"created":\s*true/]]) {
      await clearNotices(page);
      await palette(page, 's-code agent: create c.txt over MCP');
      // VS Code's own confirmation of a tool that is not read-only, outside a chat ...
      await dialog.filter({ hasText: 'Run Edit files' }).waitFor({ timeout: 30000 });
      await dialog.getByRole('button', { name: 'Yes' }).click();
      // ... then the s-code modal, which names the agent (MCP clientInfo: code-server here)
      const asked = dialog.filter({ hasText: 's-code, for the agent' });
      await asked.waitFor({ timeout: 30000 });
      const question = await asked.innerText();
      if (!question.includes('s-code, for the agent code-server: Edit c.txt (new, 1 line)?')) {
        throw new Error(`unexpected approval dialog: ${question}`);
      }
      if (SHOTS && button === 'Deny') await page.screenshot({ path: path.join(SHOTS, 'vscode-mcp-prompt.png') });
      await asked.getByRole('button', { name: button }).click();
      const said = await (await notice(page, /agent: MCP edit/)).innerText();
      if (!outcome.test(said)) throw new Error(`${button}: ${said}`);
      if (button === 'Deny' && fs.existsSync(created)) throw new Error('denied, and yet c.txt was written');
      lap(button);
    }
    if (fs.readFileSync(created, 'utf8') !== 'written over MCP\n') throw new Error('c.txt is not what was approved');
    console.log('E2E an edit over MCP: VS Code confirms, the s-code modal names the agent; Deny writes nothing, Approve writes');
    await clearNotices(page);
    await palette(page, 's-code agent: turn the s-code MCP server off');
    const off = await (await notice(page, /agent: sCode.mcpServer.enabled is off/)).innerText();
    if (!off.includes('MCP tools: none')) throw new Error(`still listed: ${off}`);
    for (const deadline = Date.now() + 15000; mcpServers(WORKSPACE).length > 0; await page.waitForTimeout(100)) {
      if (Date.now() > deadline) throw new Error(`s-code mcp still runs: ${mcpServers(WORKSPACE)}`);
    }
    lap('off');
    console.log('E2E sCode.mcpServer.enabled off: VS Code lists none of its tools and s-code mcp has ended');
    console.log(`E2E (the MCP steps took ${Date.now() - mcpStarted} ms: ${took.join(', ')})`);

    // 7. the server crashes: it is restarted, and the agent's next call is asked again
    await palette(page, 'Notifications: Clear All Notifications');
    await page.keyboard.press('Escape');
    killServer(process.env.STATE_DIR);
    await page.waitForTimeout(2500); // the restart backoff: 1 s
    await focusA(page);
    await palette(page, 's-code agent: edit the active file');
    await dialog.waitFor({ timeout: 30000 });
    await dialog.getByRole('button', { name: 'Deny' }).click();
    await notice(page, /agent: approval_denied/);
    console.log('E2E after a crash the server was restarted and answers');

    // 8. no server at all: the status bar says so, with a way to fix it
    fs.writeFileSync(SETTINGS, JSON.stringify({ ...JSON.parse(fs.readFileSync(SETTINGS, 'utf8')), 'sCode.server.command': ['/nonexistent/s-code', 'serve'] }));
    await page.reload();
    await page.getByText('s-code: not running').waitFor({ timeout: 90000 });
    await notice(page, /s-code is not running/);
    console.log('E2E without a server the status bar says "not running", with a fix');
  } finally {
    if (SHOT) await page.screenshot({ path: SHOT });
    await browser.close();
  }
}

main().then(
  () => console.log('E2E done'),
  (err) => {
    console.log(`E2E FAILED: ${err.message}`);
    process.exit(1);
  },
);
