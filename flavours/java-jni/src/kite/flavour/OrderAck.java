package kite.flavour;

import kite.Application;
import kite.Message;
import kite.Reply;
import kite.Session;

/**
 * The lab's order-entry application in Java, as kite-acceptor's ack mode
 * answers: each NewOrderSingle gets an ExecutionReport New (OrderID,
 * ClOrdID, ExecID, ExecType, OrdStatus, Symbol, Side, OrderQty, Price,
 * LeavesQty, CumQty, AvgPx, TransactTime in milliseconds; 16-digit IDs); an
 * order lacking ClOrdID, Side, Symbol or OrderQty gets a session Reject
 * naming the tag; any other application message a BusinessMessageReject.
 * Allocation-free per order.
 */
final class OrderAck implements Application {
    static final int CL_ORD_ID = 11, SIDE = 54, SYMBOL = 55, ORDER_QTY = 38, PRICE = 44;

    private long nextId = System.currentTimeMillis() * 1000;  // unique per run, as kite-acceptor's IdSource
    // Orders handled; plain (racy under pool or shard, where it is not reported).
    long orders;

    @Override
    public void onMessage(Session s, Message m, Reply r) {
        if (!m.isType('D')) {
            r.rejectUnsupported();
            return;
        }
        ++orders;
        final int cl = m.indexOf(CL_ORD_ID), side = m.indexOf(SIDE), sym = m.indexOf(SYMBOL);
        final long qty = m.getLong(ORDER_QTY, -1);
        final int missing = cl < 0 ? CL_ORD_ID : side < 0 ? SIDE : sym < 0 ? SYMBOL : qty < 0 ? ORDER_QTY : 0;
        if (missing != 0) {
            r.begin("3").addLong(45, m.msgSeqNum()).addLong(371, missing).add(372, "D").addLong(373, 1)
                    .add(58, "Required tag missing");
            return;
        }
        final long id = nextId++;
        r.begin("8").addLongPadded(37, id % 10_000_000_000_000_000L, 16).addField(CL_ORD_ID, m, cl)
                .addLongPadded(17, id % 10_000_000_000_000_000L, 16).addChar(150, '0').addChar(39, '0')
                .addField(SYMBOL, m, sym).addField(SIDE, m, side).addLong(ORDER_QTY, qty);
        final int px = m.indexOf(PRICE);
        if (px >= 0) r.addField(PRICE, m, px);
        r.addLong(151, qty).addLong(14, 0).addLong(6, 0).addTimestamp(60, m.timeNanos());
    }
}
