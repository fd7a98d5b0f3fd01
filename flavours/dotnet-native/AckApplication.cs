using System;
using System.Threading;
using Kite;

namespace Kite.DotnetNative;

// kite-acceptor's `ack` application in C#: every NewOrderSingle is accepted
// (ExecutionReport New), every cancel and replace acknowledged as asked, any
// other application message answered with a BusinessMessageReject. It keeps
// no book. The hot path allocates nothing: the report is written into a
// stackalloc buffer and handed to the session in the same callback.
internal sealed class AckApplication : Application
{
    // One cache line of counters per session: pool and shard threads write
    // their own sessions' lines only.
    private const int Stride = 8;
    private const int NextId = 0, Orders = 1, Rejects = 2, SendFailures = 3;
    private readonly long[] _state;

    public AckApplication(int sessions)
    {
        _state = new long[Math.Max(1, sessions) * Stride];
        // Order and exec IDs of 16 digits, counted from the start time in
        // microseconds as kite-acceptor's; sessions a billion apart.
        long start = DateTime.UtcNow.Ticks / 10 - DateTime.UnixEpoch.Ticks / 10;
        for (int k = 0; k < sessions; ++k) _state[k * Stride + NextId] = start + k * 1_000_000_000L;
    }

    public long OrderCount()
    {
        long n = 0;
        for (int i = Orders; i < _state.Length; i += Stride) n += Volatile.Read(ref _state[i]);
        return n;
    }

    public long RejectCount()
    {
        long n = 0;
        for (int i = Rejects; i < _state.Length; i += Stride) n += Volatile.Read(ref _state[i]);
        return n;
    }

    public long SendFailureCount()
    {
        long n = 0;
        for (int i = SendFailures; i < _state.Length; i += Stride) n += Volatile.Read(ref _state[i]);
        return n;
    }

    // Forgets the warm-up's orders.
    public void ResetCounts()
    {
        for (int i = 0; i < _state.Length; i += Stride)
        {
            Volatile.Write(ref _state[i + Orders], 0);
            Volatile.Write(ref _state[i + Rejects], 0);
            Volatile.Write(ref _state[i + SendFailures], 0);
        }
    }

    public override void OnMessage(Session session, in Message message)
    {
        ReadOnlySpan<byte> type = message.MsgType;
        int line = session.Index * Stride;
        if (type.Length == 1)
        {
            switch (type[0])
            {
                case (byte)'D': NewOrder(session, message, line); return;
                case (byte)'F': Cancel(session, message, line, replace: false); return;
                case (byte)'G': Cancel(session, message, line, replace: true); return;
            }
        }
        ++_state[line + Rejects];
        Count(session.Reject(message, Session.UnsupportedMessageType, "Unsupported message type"u8), line);
    }

    // The fields of an order, read in one pass over the field index.
    private ref struct OrderFields
    {
        public ReadOnlySpan<byte> ClOrdId, OrigClOrdId, Symbol, Side, Qty, Price, OrdType;
    }

    private static OrderFields Read(in Message message)
    {
        OrderFields o = default;
        for (int i = 0, n = message.FieldCount; i < n; ++i)
        {
            Field f = message[i];
            switch (f.Tag)
            {
                case Tag.ClOrdID: o.ClOrdId = f.Value; break;
                case Tag.OrigClOrdID: o.OrigClOrdId = f.Value; break;
                case Tag.Symbol: o.Symbol = f.Value; break;
                case Tag.Side: o.Side = f.Value; break;
                case Tag.OrderQty: o.Qty = f.Value; break;
                case Tag.Price: o.Price = f.Value; break;
                case Tag.OrdType: o.OrdType = f.Value; break;
            }
        }
        return o;
    }

    private void NewOrder(Session session, in Message message, int line)
    {
        ++_state[line + Orders];
        OrderFields o = Read(message);
        // A session Reject names the first required field that is missing or malformed.
        if (Missing(session, message, o.ClOrdId, Tag.ClOrdID, line) || Missing(session, message, o.Side, Tag.Side, line) ||
            Missing(session, message, o.Symbol, Tag.Symbol, line) || Missing(session, message, o.Qty, Tag.OrderQty, line))
            return;
        if (o.Side.Length != 1)
        {
            BadField(session, message, Tag.Side, line);
            return;
        }
        if (!FixDecimal.TryParse(o.Qty, out FixDecimal qty))
        {
            BadField(session, message, Tag.OrderQty, line);
            return;
        }
        FixDecimal price = default;
        bool hasPrice = o.Price.Length > 0;
        if (hasPrice && !FixDecimal.TryParse(o.Price, out price))
        {
            BadField(session, message, Tag.Price, line);
            return;
        }
        long id = ++_state[line + NextId];
        Span<byte> buffer = stackalloc byte[512];
        var w = new FieldWriter(buffer);
        w.Add(Tag.OrderID, id);
        w.Add(Tag.ClOrdID, o.ClOrdId);
        w.Add(Tag.ExecID, id);
        w.Add(Tag.ExecType, '0');
        w.Add(Tag.OrdStatus, '0');
        w.Add(Tag.Symbol, o.Symbol);
        w.Add(Tag.Side, (char)o.Side[0]);
        w.Add(Tag.OrderQty, qty);
        if (hasPrice) w.Add(Tag.Price, price);
        w.Add(Tag.LeavesQty, qty);
        w.Add(Tag.CumQty, Zero);
        w.Add(Tag.AvgPx, Zero);
        w.AddUtcTimestampMillis(Tag.TransactTime, message.TimeNs);
        Report(session, w, line);
    }

    // ack: stateless, every cancel and replace is accepted as asked.
    private void Cancel(Session session, in Message message, int line, bool replace)
    {
        OrderFields o = Read(message);
        if (Missing(session, message, o.ClOrdId, Tag.ClOrdID, line) ||
            Missing(session, message, o.OrigClOrdId, Tag.OrigClOrdID, line))
            return;
        bool hasQty = FixDecimal.TryParse(o.Qty, out FixDecimal qty);
        bool hasPrice = FixDecimal.TryParse(o.Price, out FixDecimal price);
        long id = ++_state[line + NextId];
        Span<byte> buffer = stackalloc byte[512];
        var w = new FieldWriter(buffer);
        w.Add(Tag.OrderID, id);
        w.Add(Tag.ClOrdID, o.ClOrdId);
        w.Add(Tag.OrigClOrdID, o.OrigClOrdId);
        w.Add(Tag.ExecID, id);
        w.Add(Tag.ExecType, replace ? '5' : '4');
        w.Add(Tag.OrdStatus, replace ? '0' : '4');
        w.Add(Tag.Symbol, o.Symbol);
        w.Add(Tag.Side, o.Side.Length == 1 ? (char)o.Side[0] : '1');
        w.Add(Tag.OrderQty, hasQty ? qty : Zero);
        if (hasPrice) w.Add(Tag.Price, price);
        w.Add(Tag.LeavesQty, replace && hasQty ? qty : Zero);
        w.Add(Tag.CumQty, Zero);
        w.Add(Tag.AvgPx, Zero);
        w.AddUtcTimestampMillis(Tag.TransactTime, message.TimeNs);
        Report(session, w, line);
    }

    private static readonly FixDecimal Zero = new(0, 0);

    private void Report(Session session, in FieldWriter w, int line)
    {
        // Cannot happen with 512 bytes and the fields' limits, but never send a cut report.
        if (w.Overflowed)
        {
            ++_state[line + SendFailures];
            return;
        }
        Count(session.Send("8"u8, w.Written), line);
    }

    private void Count(Status s, int line)
    {
        if (s != Status.Ok && s != Status.Stored) ++_state[line + SendFailures];
    }

    private bool Missing(Session session, in Message message, ReadOnlySpan<byte> value, int tag, int line)
    {
        if (value.Length > 0) return false;
        SessionReject(session, message, tag, 1, "Required tag missing"u8, line);
        return true;
    }

    private void BadField(Session session, in Message message, int tag, int line) =>
        SessionReject(session, message, tag, 6, "Incorrect data format for value"u8, line);

    // A session-level Reject (35=3) with RefSeqNum, RefTagID, RefMsgType and SessionRejectReason.
    private void SessionReject(Session session, in Message message, int tag, int reason, ReadOnlySpan<byte> text, int line)
    {
        ++_state[line + Rejects];
        Span<byte> buffer = stackalloc byte[256];
        var w = new FieldWriter(buffer);
        w.Add(Tag.RefSeqNum, message.MsgSeqNum);
        w.Add(Tag.RefTagID, (long)tag);
        w.Add(Tag.RefMsgType, message.MsgType);
        w.Add(Tag.SessionRejectReason, (long)reason);
        w.Add(Tag.Text, text);
        Count(session.Send("3"u8, w.Written), line);
    }
}
