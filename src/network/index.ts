/** The network: libp2p node, signed peer metadata, discovery, peer cache and request streams. */
export { type AnnounceOptions, type Announcer, startAnnouncing } from './announce.js';
export {
  BROWSE_SORTS,
  type BrowseInput,
  type BrowseOptions,
  type BrowsePeer,
  type BrowseResult,
  type BrowseSort,
  browsePeers,
  matchingServices,
  type PeerReputation,
  servicePricing,
} from './browse.js';
export {
  type BuyerPeerList,
  type CollectedPeers,
  type CollectPeersOptions,
  collectPeers,
  peersFromBuyer,
  peersFromBuyerList,
  peersFromNetwork,
  readBuyerPeers,
} from './browseSource.js';
export {
  type BuyerNetwork,
  type StartBuyerNetworkOptions,
  startBuyerNetwork,
} from './buyerNetwork.js';
export {
  NetworkPeerDirectory,
  type NetworkPeerDirectoryOptions,
  type PeerRoute,
} from './directory.js';
export type { DirectoryHealth } from './directoryHealth.js';
export {
  INDEXER_PEER_FIELDS,
  type IndexerPeers,
  type OnChainStats,
  peersFromIndexer,
  readIndexerPeers,
  type SnapshotPeer,
  signedRecordOf,
} from './indexerSource.js';
export { libp2pKeyFromIdentity, libp2pPeerIdFromIdentity, peerIdFromLibp2p } from './keys.js';
export * from './metadata/index.js';
export { fetchMetadata } from './metaProtocol.js';
export { type CreateSvcNodeOptions, createSvcNode, type SvcNode } from './node.js';
export { peerCachePath } from './peerCacheFile.js';
export {
  META_PROTOCOL,
  REQUEST_PROTOCOL,
  SELLERS_KEY_PREIMAGE,
  sellersDhtKey,
} from './protocols.js';
export {
  describeReachability,
  formatReachability,
  isRelayed,
  type Reachability,
} from './reachability.js';
export {
  ExchangeHasher,
  RECEIPT_DOMAIN,
  RECEIPT_TYPES,
  type ReceiptFields,
  receiptDigest,
  requestHash,
  responseHash,
} from './receiptHashes.js';
export {
  type AnswerEvidence,
  MAX_RECEIPT_SERVICE_ID,
  type Receipt,
  type ReceiptCheck,
  type ReceiptClaims,
  type ReceiptExpectations,
  type ReceiptIssuer,
  type ReceiptRefusal,
  type ReceiptTerms,
  receiptIssuer,
  receiptSchema,
  verifyReceipt,
} from './receipts.js';
export {
  type InboundRequest,
  type OutboundReply,
  type RequestHandler,
  type RequestServer,
  type RequestServerOptions,
  serveRequests,
} from './requestServer.js';
export { requestConnection } from './requestStream.js';
export { MAX_HEAD_BYTES, MAX_TRAILER_BYTES } from './requestWire.js';
export { LibP2pTransport, type LibP2pTransportOptions, type PeerRouter } from './transport.js';
export * from './types.js';
