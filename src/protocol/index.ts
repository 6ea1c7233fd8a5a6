/**
 * The contracts between the buyer and the gateway, one module each: the `x-svc-*` headers, the
 * routing-policy header, the closing `: svc-usage` stream comment, and the typed call of a buyer
 * in the gateway's own process. Both sides import them; neither imports the other.
 */
export * from './buyerCall.js';
export * from './headers.js';
export * from './maxCost.js';
export * from './requestIds.js';
export * from './requestRecord.js';
export * from './routingPolicy.js';
export * from './usageComment.js';
