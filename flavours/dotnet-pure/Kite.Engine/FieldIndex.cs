using System;

namespace Kite.Codec;

public static class Tag
{
    public const int BeginSeqNo = 7, BodyLength = 9, CheckSum = 10, ClOrdID = 11, EndSeqNo = 16, MsgSeqNum = 34,
        MsgType = 35, NewSeqNo = 36, OrderQty = 38, PossDupFlag = 43, Price = 44, RefSeqNum = 45, SenderCompID = 49,
        SendingTime = 52, Side = 54, Symbol = 55, TargetCompID = 56, Text = 58, TransactTime = 60,
        EncryptMethod = 98, HeartBtInt = 108, TestReqID = 112, OrigSendingTime = 122, GapFillFlag = 123,
        ResetSeqNumFlag = 141, RefTagID = 371, RefMsgType = 372, SessionRejectReason = 373,
        BusinessRejectReason = 380, OrderID = 37, ExecID = 17, ExecType = 150, OrdStatus = 39, LeavesQty = 151,
        CumQty = 14, AvgPx = 6;
}

/// <summary>
/// One indexed walk over a frame's body: every field's tag and value span,
/// found with one SOH scan (vectorised) and a short tag parse per field.
/// Allocated once per thread; <see cref="Build"/> resets it in O(1).
/// </summary>
public sealed class FieldIndex
{
    public const int MaxFields = 128;
    private readonly ushort[] _soh = new ushort[MaxFields];
    private readonly int[] _tags = new int[MaxFields];
    private readonly ushort[] _starts = new ushort[MaxFields];
    private readonly ushort[] _lengths = new ushort[MaxFields];
    private int _count;

    public int Count => _count;
    public int TagAt(int i) => _tags[i];

    /// <summary>
    /// Indexes body (the bytes from MsgType's tag to the SOH before CheckSum).
    /// False when a field is malformed (no '=', a non-digit tag, an empty
    /// value) or there are more than <see cref="MaxFields"/>.
    /// </summary>
    public bool Build(ReadOnlySpan<byte> body)
    {
        _count = 0;
        int n = Scan.SohPositions(body, _soh);
        if (n <= 0 || _soh[n - 1] != body.Length - 1) return false;
        int start = 0;
        for (int f = 0; f < n; f++)
        {
            int end = _soh[f];
            int tag = 0, i = start;
            for (; i < end && body[i] != '='; i++)
            {
                uint d = (uint)(body[i] - '0');
                if (d > 9 || i - start > 6) return false;
                tag = tag * 10 + (int)d;
            }
            if (i == start || i >= end - 1 || tag == 0) return false;
            _tags[f] = tag;
            _starts[f] = (ushort)(i + 1);
            _lengths[f] = (ushort)(end - i - 1);
            start = end + 1;
        }
        _count = n;
        return true;
    }

    /// <summary>Position of the first field with this tag, or -1.</summary>
    public int Find(int tag)
    {
        for (int i = 0; i < _count; i++)
            if (_tags[i] == tag) return i;
        return -1;
    }

    public ReadOnlySpan<byte> Value(ReadOnlySpan<byte> body, int field) => body.Slice(_starts[field], _lengths[field]);

    public bool TryGet(ReadOnlySpan<byte> body, int tag, out ReadOnlySpan<byte> value)
    {
        int f = Find(tag);
        value = f < 0 ? default : Value(body, f);
        return f >= 0;
    }

    public bool TryGetUInt(ReadOnlySpan<byte> body, int tag, out ulong value)
    {
        value = 0;
        return TryGet(body, tag, out var v) && Numbers.TryParseUInt(v, out value);
    }
}

/// <summary>The standard header, read from the index: spans into the body, numbers parsed.</summary>
public ref struct Header
{
    public ReadOnlySpan<byte> MsgType;
    public ReadOnlySpan<byte> SenderCompID;
    public ReadOnlySpan<byte> TargetCompID;
    public ulong MsgSeqNum;
    public bool PossDup;

    /// <summary>False when MsgType is not the first field or a required header field is missing or bad.</summary>
    public static bool Read(FieldIndex ix, ReadOnlySpan<byte> body, out Header h)
    {
        h = default;
        if (ix.Count == 0 || ix.TagAt(0) != Tag.MsgType) return false;
        h.MsgType = ix.Value(body, 0);
        bool seq = false;
        // One pass over the index: no engine orders header fields the same way.
        for (int i = 1; i < ix.Count; i++)
        {
            switch (ix.TagAt(i))
            {
                case Tag.SenderCompID: h.SenderCompID = ix.Value(body, i); break;
                case Tag.TargetCompID: h.TargetCompID = ix.Value(body, i); break;
                case Tag.MsgSeqNum: seq = Numbers.TryParseUInt(ix.Value(body, i), out h.MsgSeqNum); break;
                case Tag.PossDupFlag: h.PossDup = ix.Value(body, i).SequenceEqual("Y"u8); break;
            }
        }
        return seq && !h.SenderCompID.IsEmpty && !h.TargetCompID.IsEmpty;
    }
}
