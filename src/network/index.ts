/** The network: libp2p node, signed peer metadata, discovery, peer cache and request streams. */
export * from './types.js';
