/**
 * The HTTP toolkit of the servers (buyer, gateway, console; the seller's JSON bodies too): bounded
 * body reading, strict JSON bodies, replies.
 */
export { header } from './header.js';
export { API_INGRESS, boundIngress, type IngressTimeouts } from './ingress.js';
export { isJsonRequest, parseJsonObject, parseJsonRequest } from './jsonBody.js';
export { jsonText, textSlices } from './jsonText.js';
export { localUrl } from './localUrl.js';
export { readBody, readStreamBody } from './readBody.js';
export { jsonArrayPieces, sendError, sendJson, sendJsonPieces, writeChunk } from './reply.js';
