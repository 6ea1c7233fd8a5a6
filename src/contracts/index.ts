/**
 * Solidity contracts (TestUSDC, SvcPayments) and their generated ABI + bytecode. Rebuild the
 * artifacts with `npm run build:contracts` after editing a .sol file.
 */
export {
  SvcPaymentsAbi,
  SvcPaymentsBytecode,
  SvcPaymentsDeployedBytecode,
  SvcPaymentsImmutableRanges,
  TestUSDCAbi,
  TestUSDCBytecode,
  TestUSDCDeployedBytecode,
} from './artifacts.generated.js';
