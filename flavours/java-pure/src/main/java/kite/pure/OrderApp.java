package kite.pure;

/**
 * The ack application: each NewOrderSingle is answered with an
 * ExecutionReport New (ExecType=0, OrdStatus=0) echoing ClOrdID, Symbol,
 * Side, OrderQty and Price, with the fields, in order, that Kite's C++ ack
 * application sends. Any other application message gets a
 * BusinessMessageReject (380=3, unsupported message type).
 */
public final class OrderApp implements Application {
    private static final byte[] UNSUPPORTED = Ascii.bytes("Unsupported message type");

    private final Decimal price = new Decimal();
    private long nextId;
    private long orders;

    /** IDs count from idBase (16 digits: the start time in microseconds, as Kite's C++ does). */
    public OrderApp(long idBase) {
        nextId = idBase;
    }

    public long orders() { return orders; }

    @Override
    public void onMessage(Session s, Header h, FieldIndex ix, long nowMs) {
        if (!h.is('D')) {
            s.begin((byte) 'j', nowMs)
             .putLong(Tag.RefSeqNum, h.seqNum)
             .putBytes(Tag.RefMsgType, ix.buffer(), h.msgTypeOffset, h.msgTypeLength)
             .putLong(Tag.BusinessRejectReason, 3)
             .putAscii(Tag.Text, UNSUPPORTED);
            s.send();
            return;
        }
        final int missing = !(ix.length(Tag.ClOrdID) > 0) ? Tag.ClOrdID
                          : !(ix.length(Tag.Symbol) > 0) ? Tag.Symbol
                          : ix.getChar(Tag.Side) == 0 ? Tag.Side
                          : ix.getLong(Tag.OrderQty, -1) <= 0 ? Tag.OrderQty
                          : !ix.getDecimal(Tag.Price, price) ? Tag.Price : 0;
        if (missing != 0) {
            s.reject(h, missing, ix.has(missing) ? Session.REJECT_INCORRECT_FORMAT : Session.REJECT_REQUIRED_TAG_MISSING, nowMs);
            return;
        }
        final long qty = ix.getLong(Tag.OrderQty, 0);
        final long id = nextId++;
        s.begin((byte) '8', nowMs)
         .putLong(Tag.OrderID, id)
         .putBytes(Tag.ClOrdID, ix.buffer(), ix.offset(Tag.ClOrdID), ix.length(Tag.ClOrdID))
         .putLong(Tag.ExecID, id)
         .putChar(Tag.ExecType, '0')
         .putChar(Tag.OrdStatus, '0')
         .putBytes(Tag.Symbol, ix.buffer(), ix.offset(Tag.Symbol), ix.length(Tag.Symbol))
         .putChar(Tag.Side, (char) ix.getChar(Tag.Side))
         .putLong(Tag.OrderQty, qty)
         .putDecimal(Tag.Price, price.mantissa, price.exponent)
         .putLong(Tag.LeavesQty, qty)
         .putLong(Tag.CumQty, 0)
         .putLong(Tag.AvgPx, 0)
         .putTimestamp(Tag.TransactTime, nowMs);
        s.send();
        orders++;
    }
}
