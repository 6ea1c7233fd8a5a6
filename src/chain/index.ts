/** Chain access: anvil launcher, viem clients with fallback RPCs, safe tx sending, contract bindings, deployments. */
export { type AnvilProcess, anvilBinaryPath, type StartAnvilOptions, startAnvil } from './anvil.js';
export { type ChainClients, type ChainClientsOptions, createChainClients } from './clients.js';
export { type ConnectedChain, connectChain } from './connect.js';
export {
  type Deployment,
  deployContracts,
  deploymentPath,
  LOCAL_GRACE_PERIOD_SECONDS,
  readDeployment,
  writeDeployment,
} from './deployment.js';
export {
  type BaseTarget,
  type DeployedPayments,
  type DeploymentPlan,
  planPaymentsDeployment,
  resolveBaseTarget,
  sendPaymentsDeployment,
} from './deployPayments.js';
export {
  type DepositAuthorization,
  depositAuthorizationGasWei,
  ethBalanceOf,
  isAuthorizationUsed,
  newAuthorizationNonce,
  signDepositAuthorization,
  submitDepositAuthorization,
  type TokenDomain,
  usdcTokenDomain,
} from './depositAuthorization.js';
export { RECEIVE_WITH_AUTHORIZATION_TYPES, TRANSFER_WITH_AUTHORIZATION_TYPES } from './eip3009.js';
export { DEFAULT_ETH_USD, describeGasPrice, describeWei, weiToMicroUsd } from './gasCost.js';
export {
  ANVIL_DEPLOYER_KEY,
  DEFAULT_FAUCET_ETH,
  type LocalChain,
  runFaucet,
  type StartLocalChainOptions,
  startLocalChain,
} from './localChain.js';
export {
  baseNetworkOfChainId,
  type ChainNetwork,
  LOCAL_RPC_URL,
  NETWORKS,
  type NetworkInfo,
} from './networks.js';
export {
  type CloseRequestedEvent,
  type OnChainChannel,
  type OnChainChannelStatus,
  type OnChainSellerStats,
  PaymentsContract,
} from './paymentsContract.js';
export { TxSender } from './sender.js';
