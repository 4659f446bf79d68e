// Drives a real VS Code (code-server) in Debian's Chromium: the s-code extension activates, the
// status bar shows the mode and the sandbox tier, the user types in a.txt without saving, the test
// agent edits the file through s-code's callTool API, the approval modal is accepted, and the edit
// lands in the unsaved editor. Prints "E2E <step>" lines; exits non-zero on the first failure.
const { chromium } = require('playwright-core');

const { URL_BASE, WORKSPACE, SHOT } = process.env;

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
    await page.getByText(/s-code: manual · sandbox tier \d/).waitFor({ timeout: 90000 });
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

    await page.keyboard.press('F1');
    await page.keyboard.type('s-code agent: edit the active file');
    await page.keyboard.press('Enter');
    const dialog = page.locator('.monaco-dialog-box');
    await dialog.waitFor({ timeout: 30000 });
    const message = await dialog.innerText();
    if (!message.includes('Edit a.txt')) throw new Error(`unexpected approval dialog: ${message}`);
    console.log('E2E the approval modal asks: Edit a.txt');
    await dialog.getByRole('button', { name: 'Approve once' }).click();

    const said = page.getByText(/^agent: /).first();
    try {
      await said.waitFor({ timeout: 30000 });
    } catch (err) {
      await page.keyboard.press('F1');
      await page.keyboard.type('Notifications: Show Notifications');
      await page.keyboard.press('Enter');
      await page.waitForTimeout(1000);
      await said.waitFor({ timeout: 5000 });
    }
    const said_text = await said.innerText();
    if (said_text !== 'agent: applied via editor (read from buffer)') throw new Error(said_text);
    const text = (await editor.locator('.view-lines').innerText()).replace(/\u00a0/g, ' ');
    if (!text.includes('EDITED BY THE AGENT') || !text.includes('user typed this, unsaved')) {
      throw new Error(`editor text: ${text}`);
    }
    console.log('E2E the agent edit landed in the unsaved editor');
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
