using System;
using Kite.Interop;

namespace Kite;

/// <summary>One field of a message: its tag and its value's bytes.</summary>
public readonly ref struct Field
{
    /// <summary>The field's tag.</summary>
    public readonly int Tag;
    /// <summary>The value, without "tag=" and the SOH.</summary>
    public readonly ReadOnlySpan<byte> Value;

    internal Field(int tag, ReadOnlySpan<byte> value)
    {
        Tag = tag;
        Value = value;
    }
}

/// <summary>
/// An inbound application message, borrowed from libkite: a view over the
/// engine's receive buffer and its field index, valid during the callback
/// that received it only (it cannot be stored; copy what must outlive the
/// call). Nothing is allocated to read it.
/// </summary>
public readonly unsafe ref struct Message
{
    private readonly KiteMessage* _m;

    internal Message(KiteMessage* m) => _m = m;

    internal KiteMessage* Handle => _m;

    /// <summary>The whole frame, "8=FIX.4.4|9=..|...|10=nnn|" with SOH separators.</summary>
    public ReadOnlySpan<byte> Frame => new(_m->Frame, (int)_m->FrameLength);

    /// <summary>MsgType (35).</summary>
    public ReadOnlySpan<byte> MsgType => Span(_m->MsgType);
    /// <summary>BeginString (8).</summary>
    public ReadOnlySpan<byte> BeginString => Span(_m->BeginString);
    /// <summary>SenderCompID (49).</summary>
    public ReadOnlySpan<byte> SenderCompId => Span(_m->SenderCompId);
    /// <summary>TargetCompID (56).</summary>
    public ReadOnlySpan<byte> TargetCompId => Span(_m->TargetCompId);
    /// <summary>SendingTime (52), as sent.</summary>
    public ReadOnlySpan<byte> SendingTime => Span(_m->SendingTime);
    /// <summary>MsgSeqNum (34).</summary>
    public ulong MsgSeqNum => _m->MsgSeqNum;
    /// <summary>PossDupFlag (43) is Y.</summary>
    public bool PossDup => _m->PossDup != 0;
    /// <summary>PossResend (97) is Y.</summary>
    public bool PossResend => _m->PossResend != 0;
    /// <summary>The session's clock for this message, UTC nanoseconds since the epoch (its replies' SendingTime).</summary>
    public long TimeNs => _m->TimeNs;

    /// <summary>Fields in frame order, header and trailer included.</summary>
    public int FieldCount => (int)_m->FieldCount;

    /// <summary>The i-th field in frame order.</summary>
    /// <exception cref="ArgumentOutOfRangeException">i is not below <see cref="FieldCount"/>.</exception>
    public Field this[int i]
    {
        get
        {
            if ((uint)i >= _m->FieldCount) throw new ArgumentOutOfRangeException(nameof(i));
            KiteField f = _m->Fields[i];
            return new Field((int)f.Tag, new ReadOnlySpan<byte>(_m->Frame + f.Offset, (int)f.Length));
        }
    }

    /// <summary>The first field with this tag, in frame order.</summary>
    /// <returns>false when the message has no such field (value is then empty).</returns>
    public bool TryGet(int tag, out ReadOnlySpan<byte> value)
    {
        KiteField* f = _m->Fields;
        for (uint i = 0, n = _m->FieldCount; i < n; ++i)
        {
            if (f[i].Tag == (uint)tag)
            {
                value = new ReadOnlySpan<byte>(_m->Frame + f[i].Offset, (int)f[i].Length);
                return true;
            }
        }
        value = default;
        return false;
    }

    /// <summary>The first field with this tag, or an empty span when absent.</summary>
    public ReadOnlySpan<byte> Get(int tag) => TryGet(tag, out ReadOnlySpan<byte> v) ? v : default;

    private static ReadOnlySpan<byte> Span(KiteStr s) => new(s.Data, (int)s.Size);
}
