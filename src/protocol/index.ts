/**
 * The contracts between the buyer and the gateway, one module each: the `x-svc-*` headers, the
 * routing-policy header and the closing `: svc-usage` stream comment. Both sides import them;
 * neither imports the other.
 */
export * from './headers.js';
export * from './maxCost.js';
export * from './requestIds.js';
export * from './requestRecord.js';
export * from './routingPolicy.js';
export * from './usageComment.js';
