using System;

namespace Kite.Codec;

/// <summary>
/// UTC wall-clock text for SendingTime and TransactTime: "YYYYMMDD-HH:MM:SS.sss".
/// The date and second are rendered once per second; only milliseconds per call.
/// </summary>
public sealed class UtcClock
{
    public const int Length = 21;
    private readonly byte[] _second = new byte[17];
    private long _secondTicks = -1;

    /// <summary>Writes the time of ticks (DateTime ticks, UTC) into dest[0..21).</summary>
    public void Write(Span<byte> dest, long ticks)
    {
        long second = ticks / TimeSpan.TicksPerSecond;
        if (second != _secondTicks) Render(second);
        _second.CopyTo(dest);
        dest[17] = (byte)'.';
        Numbers.WritePadded(dest.Slice(18, 3), (ulong)(ticks % TimeSpan.TicksPerSecond / TimeSpan.TicksPerMillisecond), 3);
    }

    private void Render(long second)
    {
        var t = new DateTime(second * TimeSpan.TicksPerSecond, DateTimeKind.Utc);
        Span<byte> d = _second;
        Numbers.WritePadded(d.Slice(0, 4), (ulong)t.Year, 4);
        Numbers.WritePadded(d.Slice(4, 2), (ulong)t.Month, 2);
        Numbers.WritePadded(d.Slice(6, 2), (ulong)t.Day, 2);
        d[8] = (byte)'-';
        Numbers.WritePadded(d.Slice(9, 2), (ulong)t.Hour, 2);
        d[11] = (byte)':';
        Numbers.WritePadded(d.Slice(12, 2), (ulong)t.Minute, 2);
        d[14] = (byte)':';
        Numbers.WritePadded(d.Slice(15, 2), (ulong)t.Second, 2);
        _secondTicks = second;
    }
}

/// <summary>
/// Writes one FIX.4.4 message in place into the buffer it is handed. The
/// session's CompIDs come pre-rendered ("\x0149=KITE\x0156=BENCH0\x0134=");
/// the writer adds MsgType, MsgSeqNum and SendingTime, then the caller's
/// fields, and <see cref="Finish"/> patches BodyLength and appends CheckSum.
/// The caller claims room first (<see cref="MaxMessage"/> bytes always suffice
/// for the messages this engine sends).
/// </summary>
public ref struct FixWriter
{
    public const int MaxMessage = 1024;
    // "8=FIX.4.4\x019=" and room for a three-digit BodyLength and its SOH.
    private const int BodyOffset = 16;
    private readonly Span<byte> _buf;
    private int _pos;

    public FixWriter(Span<byte> buf, ReadOnlySpan<byte> msgType, ReadOnlySpan<byte> compHeader, ulong seq,
                     UtcClock clock, long ticks)
    {
        _buf = buf;
        _pos = BodyOffset;
        Raw("35="u8);
        Raw(msgType);
        Raw(compHeader);
        _pos += Numbers.WriteUInt(_buf.Slice(_pos), seq);
        Raw("\u000152="u8);
        clock.Write(_buf.Slice(_pos), ticks);
        _pos += UtcClock.Length;
        _buf[_pos++] = Scan.Soh;
    }

    private void Raw(scoped ReadOnlySpan<byte> s)
    {
        s.CopyTo(_buf.Slice(_pos));
        _pos += s.Length;
    }

    private void TagEq(int tag)
    {
        _pos += Numbers.WriteUInt(_buf.Slice(_pos), (ulong)tag);
        _buf[_pos++] = (byte)'=';
    }

    public void AddBytes(int tag, scoped ReadOnlySpan<byte> value)
    {
        TagEq(tag);
        Raw(value);
        _buf[_pos++] = Scan.Soh;
    }

    public void AddChar(int tag, byte value)
    {
        TagEq(tag);
        _buf[_pos++] = value;
        _buf[_pos++] = Scan.Soh;
    }

    public void AddUInt(int tag, ulong value)
    {
        TagEq(tag);
        _pos += Numbers.WriteUInt(_buf.Slice(_pos), value);
        _buf[_pos++] = Scan.Soh;
    }

    /// <summary>A number written with exactly width digits (zero-padded): fixed-width ids.</summary>
    public void AddPadded(int tag, ulong value, int width)
    {
        TagEq(tag);
        Numbers.WritePadded(_buf.Slice(_pos, width), value, width);
        _pos += width;
        _buf[_pos++] = Scan.Soh;
    }

    public void AddDecimal(int tag, Decimal64 value)
    {
        TagEq(tag);
        _pos += Numbers.WriteDecimal(_buf.Slice(_pos), value);
        _buf[_pos++] = Scan.Soh;
    }

    public void AddTime(int tag, UtcClock clock, long ticks)
    {
        TagEq(tag);
        clock.Write(_buf.Slice(_pos), ticks);
        _pos += UtcClock.Length;
        _buf[_pos++] = Scan.Soh;
    }

    /// <summary>Patches BodyLength, appends CheckSum; returns the message's length (it starts at the buffer's start).</summary>
    public int Finish()
    {
        int bodyLength = _pos - BodyOffset;
        int digits = Numbers.DigitCount((ulong)bodyLength);
        if (digits > 3) throw new InvalidOperationException("FixWriter: body over 999 bytes");
        int shift = 3 - digits;  // short bodies (Heartbeat, Logout) move down next to their BodyLength
        if (shift > 0)
        {
            _buf.Slice(BodyOffset, bodyLength).CopyTo(_buf.Slice(BodyOffset - shift));
            _pos -= shift;
        }
        Framing.Prefix.CopyTo(_buf);
        Numbers.WriteUInt(_buf.Slice(Framing.Prefix.Length), (ulong)bodyLength);
        _buf[Framing.Prefix.Length + digits] = Scan.Soh;
        byte sum = Scan.Checksum(_buf.Slice(0, _pos));
        Raw("10="u8);
        Numbers.WritePadded(_buf.Slice(_pos, 3), sum, 3);
        _pos += 3;
        _buf[_pos++] = Scan.Soh;
        return _pos;
    }
}
