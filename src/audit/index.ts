/** Audits of the model each seller serves (docs/decisions/164-audits-a-seller-cannot-tell-from-traffic.md). */
export { AUDIT_HEADER, auditIdAgeOf, sendThroughProxy } from './ask.js';
export { Auditor } from './auditor.js';
export { type AuditBundle, bundleOf, MAX_BUNDLE_BYTES, verifyBundle } from './bundle.js';
export type { DeliveredAnswer, DeliveredBody } from './delivered.js';
export type { ShapeInput } from './shape.js';
export { AuditStore } from './store.js';
export type { ProbeRecord, SellerAudit, Verdict } from './verdict.js';
