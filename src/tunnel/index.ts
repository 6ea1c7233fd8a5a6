/** The gateway tunnel: a public relay for gateways that cannot be reached, and the gateway's side. */
export {
  type GatewayTunnelOptions,
  type RunningGatewayTunnel,
  startGatewayTunnel,
} from './gatewayTunnel.js';
export { loadOrCreateKey } from './keyFile.js';
export {
  DEFAULT_TUNNEL_BODY_LIMIT_BYTES,
  DEFAULT_TUNNEL_STREAMS_PER_GATEWAY,
  type TunnelRelay,
  type TunnelRelayOptions,
  tunnelRelay,
} from './relay.js';
