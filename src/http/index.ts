/** The HTTP toolkit of the servers (buyer, gateway): bounded body reading, JSON bodies, replies. */
export { header } from './header.js';
export { parseJsonObject, parseJsonRequest } from './jsonBody.js';
export { readBody } from './readBody.js';
export { sendError, sendJson, writeChunk } from './reply.js';
