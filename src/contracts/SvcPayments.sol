// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

interface IUSDC {
    function transfer(address to, uint256 value) external returns (bool);
    function transferFrom(address from, address to, uint256 value) external returns (bool);
    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external;
}

/// @title SvcPayments: USDC deposits and buyer->seller payment channels.
/// @notice A buyer deposits USDC into free credits. A channel (buyer, seller, salt) is opened by the
/// seller with the buyer's EIP-712 Reserve authorisation, which moves up to `maxAmount` from the
/// buyer's credits into the channel's lock. The buyer pays with EIP-712 Vouchers carrying a
/// cumulative amount; the seller settles the delta at any time, and closes the channel with a final
/// voucher, returning the unspent lock to the buyer's credits. A buyer whose seller went away asks
/// for close and reclaims the unspent lock after `gracePeriod` (the seller can still settle until
/// then). Signatures are bound to the chain id and this contract by the EIP-712 domain and to the
/// channel by its id. Invariant: USDC held == sum of credits + sum of (lock - settled) of open channels.
contract SvcPayments {
    bytes32 public constant RESERVE_TYPEHASH =
        keccak256("Reserve(bytes32 channelId,address buyer,address seller,uint256 maxAmount,uint256 deadline)");
    bytes32 public constant VOUCHER_TYPEHASH = keccak256("Voucher(bytes32 channelId,uint256 cumulativeAmount)");

    uint8 public constant STATUS_NONE = 0;
    uint8 public constant STATUS_OPEN = 1;
    uint8 public constant STATUS_CLOSED = 2;

    struct Channel {
        address buyer;
        address seller;
        uint256 locked;
        uint256 settled;
        uint64 openedAt;
        uint64 closeRequestedAt;
        uint8 status;
    }

    struct SellerStats {
        uint256 settledVolume;
        uint64 channelCount;
        uint64 uniqueBuyers;
        uint64 reclaimedUnsettled;
        uint64 firstSettlementAt;
        uint64 lastSettlementAt;
    }

    IUSDC public immutable usdc;
    uint64 public immutable gracePeriod;

    mapping(address => uint256) public balanceOf;
    mapping(bytes32 => Channel) private _channels;
    mapping(address => SellerStats) private _sellerStats;
    mapping(address => mapping(address => bool)) private _paidBy;

    event Deposited(address indexed buyer, address indexed from, uint256 amount);
    event Withdrawn(address indexed buyer, address indexed to, uint256 amount);
    event ChannelOpened(bytes32 indexed channelId, address indexed buyer, address indexed seller, bytes32 salt, uint256 locked);
    event ChannelToppedUp(bytes32 indexed channelId, address indexed buyer, address indexed seller, uint256 locked);
    event Settled(bytes32 indexed channelId, address indexed buyer, address indexed seller, uint256 cumulativeAmount, uint256 paid);
    event CloseRequested(bytes32 indexed channelId, address indexed buyer, address indexed seller, uint256 reclaimableAt);
    event ChannelClosed(bytes32 indexed channelId, address indexed buyer, address indexed seller, uint256 settled, uint256 refunded, bool reclaimed);

    constructor(address usdc_, uint64 gracePeriod_) {
        usdc = IUSDC(usdc_);
        gracePeriod = gracePeriod_;
    }

    // ---------------------------------------------------------------- EIP-712

    function DOMAIN_SEPARATOR() public view returns (bytes32) {
        return keccak256(
            abi.encode(
                keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"),
                keccak256(bytes("SvcPayments")),
                keccak256(bytes("1")),
                block.chainid,
                address(this)
            )
        );
    }

    /// @notice The id of the channel (buyer, seller, salt).
    function channelIdOf(address buyer, address seller, bytes32 salt) public pure returns (bytes32) {
        return keccak256(abi.encode(buyer, seller, salt));
    }

    // ---------------------------------------------------------------- credits

    /// @notice Deposits `amount` from the caller (after approve/permit) into `buyer`'s credits.
    function deposit(address buyer, uint256 amount) external {
        require(amount > 0, "amount is zero");
        require(usdc.transferFrom(msg.sender, address(this), amount), "transfer failed");
        balanceOf[buyer] += amount;
        emit Deposited(buyer, msg.sender, amount);
    }

    /// @notice Deposits with the buyer's EIP-3009 ReceiveWithAuthorization (to = this contract), so
    /// any relayer can submit it; the funds are credited to `from`.
    function depositWithAuthorization(
        address from,
        uint256 amount,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external {
        require(amount > 0, "amount is zero");
        usdc.receiveWithAuthorization(from, address(this), amount, validAfter, validBefore, nonce, v, r, s);
        balanceOf[from] += amount;
        emit Deposited(from, from, amount);
    }

    /// @notice Withdraws free credits to `to`.
    function withdraw(uint256 amount, address to) external {
        require(amount > 0, "amount is zero");
        require(balanceOf[msg.sender] >= amount, "insufficient credits");
        balanceOf[msg.sender] -= amount;
        require(usdc.transfer(to, amount), "transfer failed");
        emit Withdrawn(msg.sender, to, amount);
    }

    // ---------------------------------------------------------------- channels

    function getChannel(bytes32 channelId) external view returns (Channel memory) {
        return _channels[channelId];
    }

    /// @notice Opens (buyer, msg.sender, salt) and locks `maxAmount` of the buyer's credits, on the
    /// buyer's Reserve signature.
    function openChannel(address buyer, bytes32 salt, uint256 maxAmount, uint256 deadline, bytes calldata signature)
        external
        returns (bytes32 channelId)
    {
        channelId = channelIdOf(buyer, msg.sender, salt);
        Channel storage channel = _channels[channelId];
        require(channel.status == STATUS_NONE, "channel exists");
        require(maxAmount > 0, "amount is zero");
        _checkReserve(channelId, buyer, msg.sender, maxAmount, deadline, signature);
        require(balanceOf[buyer] >= maxAmount, "insufficient credits");
        balanceOf[buyer] -= maxAmount;
        channel.buyer = buyer;
        channel.seller = msg.sender;
        channel.locked = maxAmount;
        channel.openedAt = uint64(block.timestamp);
        channel.status = STATUS_OPEN;
        _sellerStats[msg.sender].channelCount += 1;
        emit ChannelOpened(channelId, buyer, msg.sender, salt, maxAmount);
    }

    /// @notice Raises an open channel's lock to `maxAmount` (a new Reserve signature for the higher
    /// total); anyone may submit it. Cancels a pending close request: the buyer wants to go on.
    function topUp(bytes32 channelId, uint256 maxAmount, uint256 deadline, bytes calldata signature) external {
        Channel storage channel = _channels[channelId];
        require(channel.status == STATUS_OPEN, "channel not open");
        require(maxAmount > channel.locked, "lock not raised");
        _checkReserve(channelId, channel.buyer, channel.seller, maxAmount, deadline, signature);
        uint256 delta = maxAmount - channel.locked;
        require(balanceOf[channel.buyer] >= delta, "insufficient credits");
        balanceOf[channel.buyer] -= delta;
        channel.locked = maxAmount;
        channel.closeRequestedAt = 0;
        emit ChannelToppedUp(channelId, channel.buyer, channel.seller, maxAmount);
    }

    /// @notice Pays the seller the part of a buyer-signed cumulative voucher not yet paid.
    function settle(bytes32 channelId, uint256 cumulativeAmount, bytes calldata signature) public {
        Channel storage channel = _channels[channelId];
        require(channel.status == STATUS_OPEN, "channel not open");
        require(cumulativeAmount > channel.settled, "voucher already settled");
        require(cumulativeAmount <= channel.locked, "voucher above lock");
        require(
            _recover(keccak256(abi.encode(VOUCHER_TYPEHASH, channelId, cumulativeAmount)), signature) == channel.buyer,
            "invalid voucher signature"
        );
        uint256 paid = cumulativeAmount - channel.settled;
        channel.settled = cumulativeAmount;
        SellerStats storage stats = _sellerStats[channel.seller];
        stats.settledVolume += paid;
        if (stats.firstSettlementAt == 0) stats.firstSettlementAt = uint64(block.timestamp);
        stats.lastSettlementAt = uint64(block.timestamp);
        if (!_paidBy[channel.seller][channel.buyer]) {
            _paidBy[channel.seller][channel.buyer] = true;
            stats.uniqueBuyers += 1;
        }
        require(usdc.transfer(channel.seller, paid), "transfer failed");
        emit Settled(channelId, channel.buyer, channel.seller, cumulativeAmount, paid);
    }

    /// @notice Seller closes: settles the final voucher (if it adds anything) and returns the rest of
    /// the lock to the buyer's credits. An empty signature closes without settling more.
    function close(bytes32 channelId, uint256 cumulativeAmount, bytes calldata signature) external {
        Channel storage channel = _channels[channelId];
        require(channel.status == STATUS_OPEN, "channel not open");
        require(msg.sender == channel.seller, "only the seller");
        if (signature.length > 0 && cumulativeAmount > channel.settled) settle(channelId, cumulativeAmount, signature);
        _finish(channelId, channel, false);
    }

    /// @notice Buyer asks to close; after `gracePeriod` it may reclaim the unspent lock.
    function requestClose(bytes32 channelId) external {
        Channel storage channel = _channels[channelId];
        require(channel.status == STATUS_OPEN, "channel not open");
        require(msg.sender == channel.buyer, "only the buyer");
        if (channel.closeRequestedAt == 0) channel.closeRequestedAt = uint64(block.timestamp);
        emit CloseRequested(channelId, channel.buyer, channel.seller, uint256(channel.closeRequestedAt) + gracePeriod);
    }

    /// @notice Buyer takes back the unspent lock once the grace period after requestClose has passed.
    function reclaim(bytes32 channelId) external {
        Channel storage channel = _channels[channelId];
        require(channel.status == STATUS_OPEN, "channel not open");
        require(msg.sender == channel.buyer, "only the buyer");
        require(channel.closeRequestedAt != 0, "close not requested");
        require(block.timestamp >= uint256(channel.closeRequestedAt) + gracePeriod, "grace period not over");
        if (channel.settled == 0) _sellerStats[channel.seller].reclaimedUnsettled += 1;
        _finish(channelId, channel, true);
    }

    // ---------------------------------------------------------------- stats

    function sellerStats(address seller) external view returns (SellerStats memory) {
        return _sellerStats[seller];
    }

    /// @notice Stats of many sellers in one call (for reputation).
    function sellerStatsBatch(address[] calldata sellers) external view returns (SellerStats[] memory out) {
        out = new SellerStats[](sellers.length);
        for (uint256 i = 0; i < sellers.length; i++) out[i] = _sellerStats[sellers[i]];
    }

    // ---------------------------------------------------------------- internals

    function _finish(bytes32 channelId, Channel storage channel, bool reclaimed) private {
        uint256 refunded = channel.locked - channel.settled;
        channel.status = STATUS_CLOSED;
        balanceOf[channel.buyer] += refunded;
        emit ChannelClosed(channelId, channel.buyer, channel.seller, channel.settled, refunded, reclaimed);
    }

    function _checkReserve(
        bytes32 channelId,
        address buyer,
        address seller,
        uint256 maxAmount,
        uint256 deadline,
        bytes calldata signature
    ) private view {
        require(block.timestamp <= deadline, "reserve expired");
        bytes32 structHash = keccak256(abi.encode(RESERVE_TYPEHASH, channelId, buyer, seller, maxAmount, deadline));
        require(_recover(structHash, signature) == buyer, "invalid reserve signature");
    }

    function _recover(bytes32 structHash, bytes calldata signature) private view returns (address signer) {
        require(signature.length == 65, "bad signature length");
        bytes32 r = bytes32(signature[0:32]);
        bytes32 s = bytes32(signature[32:64]);
        uint8 v = uint8(signature[64]);
        if (v < 27) v += 27;
        require(uint256(s) <= 0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0, "bad signature s");
        bytes32 digest = keccak256(abi.encodePacked("\x19\x01", DOMAIN_SEPARATOR(), structHash));
        signer = ecrecover(digest, v, r, s);
        require(signer != address(0), "bad signature");
    }
}
