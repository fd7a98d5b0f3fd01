using System;
using Kite.Codec;
using Kite.Session;

namespace Kite.App;

/// <summary>
/// The order-entry application: each NewOrderSingle (35=D) is acknowledged
/// with an ExecutionReport (New) echoing ClOrdID, Symbol, Side, OrderQty and
/// Price (read as fixed point), with 16-digit OrderID and ExecID. Anything
/// else is left to the session (a BusinessMessageReject).
/// </summary>
public sealed class OrderAck : IApplication
{
    public const int IdDigits = 16;
    private ulong _nextId;
    public ulong Orders { get; private set; }

    /// <summary>Ids start above base so that shards and workers do not collide.</summary>
    public OrderAck(ulong idBase = 0) => _nextId = idBase;

    public bool OnMessage(FixSession session, in Header header, FieldIndex ix, ReadOnlySpan<byte> body, IOutbox outbox)
    {
        if (!header.MsgType.SequenceEqual("D"u8)) return false;
        int missing = 0;
        if (!ix.TryGet(body, Tag.ClOrdID, out var clOrdId)) missing = Tag.ClOrdID;
        else if (!ix.TryGet(body, Tag.Symbol, out var symbol)) missing = Tag.Symbol;
        else if (!ix.TryGet(body, Tag.Side, out var side) || side.Length != 1) missing = Tag.Side;
        else if (!ix.TryGet(body, Tag.OrderQty, out var q) || !Numbers.TryParseDecimal(q, out var qty)) missing = Tag.OrderQty;
        else
        {
            Decimal64 price = default;
            bool priced = ix.TryGet(body, Tag.Price, out var p) && Numbers.TryParseDecimal(p, out price);
            ulong id = ++_nextId;
            var w = session.Begin(outbox.Claim(), "8"u8);
            w.AddPadded(Tag.OrderID, id, IdDigits);
            w.AddBytes(Tag.ClOrdID, clOrdId);
            w.AddPadded(Tag.ExecID, id, IdDigits);
            w.AddChar(Tag.ExecType, (byte)'0');
            w.AddChar(Tag.OrdStatus, (byte)'0');
            w.AddBytes(Tag.Symbol, symbol);
            w.AddChar(Tag.Side, side[0]);
            w.AddDecimal(Tag.OrderQty, qty);
            if (priced) w.AddDecimal(Tag.Price, price);
            w.AddDecimal(Tag.LeavesQty, qty);
            w.AddUInt(Tag.CumQty, 0);
            w.AddUInt(Tag.AvgPx, 0);
            w.AddTime(Tag.TransactTime, session.Clock, session.Now);
            outbox.Commit(w.Finish());
            Orders++;
            return true;
        }
        // A session-level Reject: a required field is missing or malformed.
        var r = session.Begin(outbox.Claim(), "3"u8);
        r.AddUInt(Tag.RefSeqNum, header.MsgSeqNum);
        r.AddUInt(Tag.RefTagID, (ulong)missing);
        r.AddBytes(Tag.RefMsgType, "D"u8);
        r.AddUInt(Tag.SessionRejectReason, 1);
        outbox.Commit(r.Finish());
        return true;
    }
}
