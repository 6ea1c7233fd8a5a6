/** Audits of the model each seller serves (docs/decisions/153-model-audits.md). */
export { AUDIT_HEADER, askThroughProxy } from './ask.js';
export { Auditor } from './auditor.js';
export { AuditStore } from './store.js';
export type { AuditEvidence, SellerAudit, Verdict } from './verdict.js';
