using System;
using Kite.Codec;

namespace Kite.Transport;

/// <summary>
/// The initiator's side of the lab's messages (Logon, NewOrderSingle,
/// TestRequest...), written with the engine's own writer: used by the
/// server's warm-up and by the tests.
/// </summary>
public sealed class ClientMessages
{
    private readonly byte[] _comp;
    private readonly UtcClock _clock = new();
    public ulong NextSeq = 1;

    public ClientMessages(string senderCompID)
    {
        _comp = System.Text.Encoding.ASCII.GetBytes("\u000149=" + senderCompID + "\u000156=KITE\u000134=");
    }

    public FixWriter Begin(Span<byte> buf, ReadOnlySpan<byte> type, ulong seq)
        => new FixWriter(buf, type, _comp, seq, _clock, DateTime.UtcNow.Ticks);

    public int Logon(Span<byte> buf)
    {
        NextSeq = 1;
        var w = Begin(buf, "A"u8, NextSeq++);
        w.AddUInt(Tag.EncryptMethod, 0);
        w.AddUInt(Tag.HeartBtInt, 30);
        w.AddChar(Tag.ResetSeqNumFlag, (byte)'Y');
        return w.Finish();
    }

    public int Order(Span<byte> buf, ulong clOrdId) => Order(buf, clOrdId, NextSeq++);

    public int Order(Span<byte> buf, ulong clOrdId, ulong seq)
    {
        Span<byte> id = stackalloc byte[13];
        id[0] = (byte)'C';
        Numbers.WritePadded(id.Slice(1), clOrdId, 12);
        var w = Begin(buf, "D"u8, seq);
        w.AddBytes(Tag.ClOrdID, id);
        w.AddChar(21, (byte)'1');
        w.AddBytes(1, "BENCH-ACCOUNT-001"u8);
        w.AddBytes(Tag.Symbol, "KITE.XPAR"u8);
        w.AddChar(Tag.Side, (byte)'1');
        w.AddTime(Tag.TransactTime, _clock, DateTime.UtcNow.Ticks);
        w.AddUInt(Tag.OrderQty, 100);
        w.AddChar(40, (byte)'2');
        w.AddDecimal(Tag.Price, new Decimal64(10125, -2));
        w.AddChar(59, (byte)'0');
        return w.Finish();
    }

    public int TestRequest(Span<byte> buf, ReadOnlySpan<byte> id)
    {
        var w = Begin(buf, "1"u8, NextSeq++);
        w.AddBytes(Tag.TestReqID, id);
        return w.Finish();
    }

    public int Simple(Span<byte> buf, ReadOnlySpan<byte> type) => Simple(buf, type, NextSeq++);

    public int Simple(Span<byte> buf, ReadOnlySpan<byte> type, ulong seq)
    {
        var w = Begin(buf, type, seq);
        return w.Finish();
    }

    public int ResendRequest(Span<byte> buf, ulong begin)
    {
        var w = Begin(buf, "2"u8, NextSeq++);
        w.AddUInt(Tag.BeginSeqNo, begin);
        w.AddUInt(Tag.EndSeqNo, 0);
        return w.Finish();
    }
}
