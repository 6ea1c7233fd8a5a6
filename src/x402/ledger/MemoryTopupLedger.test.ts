import { topupLedgerContract } from '../testing/topupLedgerContract.js';
import { MemoryTopupLedger } from './MemoryTopupLedger.js';

let keys = 0;
topupLedgerContract('memory', async () => ({
  ledger: new MemoryTopupLedger(),
  newKeyId: async () => {
    keys += 1;
    return `key_memory${keys}`;
  },
}));
