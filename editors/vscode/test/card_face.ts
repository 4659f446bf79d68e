// The VS Code face of an approval card, for tests/editors/test_card_faces.py: reads a card (JSON)
// on stdin, runs the extension's own decide() with a user who asks for the details and then
// denies, and prints what the modal and the details document showed.
import { readFileSync } from 'node:fs';

import { type Card, DENY, DETAILS, decide } from '../src/common/approval';

async function main(): Promise<void> {
  const card = JSON.parse(readFileSync(0, 'utf8')) as Card;
  const asked: string[] = [];
  const shown: string[] = [];
  const decision = await decide(card, {
    modal: async (message) => {
      asked.push(message);
      return asked.length === 1 ? DETAILS : DENY;
    },
    openReadOnly: async (_title, text) => {
      shown.push(text);
    },
  });
  process.stdout.write(JSON.stringify({ asked, shown, decision }));
}

void main();
