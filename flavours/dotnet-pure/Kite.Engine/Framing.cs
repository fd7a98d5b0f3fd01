using System;

namespace Kite.Codec;

public enum FrameStatus
{
    /// <summary>A whole frame with a right BodyLength and CheckSum.</summary>
    Complete,
    /// <summary>The start of a frame: wait for more bytes.</summary>
    Incomplete,
    /// <summary>Not a frame (bad BeginString, BodyLength or CheckSum): skip Length bytes.</summary>
    Garbled,
}

/// <summary>Where a frame's parts lie, as offsets from the start of the buffer handed to <see cref="Framing.Next"/>.</summary>
public struct Frame
{
    public FrameStatus Status;
    /// <summary>Complete: the frame's length. Garbled: bytes to skip. Incomplete: 0.</summary>
    public int Length;
    /// <summary>First byte of the body (MsgType's tag), and its length (BodyLength's value).</summary>
    public int BodyStart, BodyLength;
}

/// <summary>
/// FIX framing: tells an incomplete frame (wait) from an invalid one (skip it
/// without reading past its claimed end). BeginString must be FIX.4.4.
/// </summary>
public static class Framing
{
    public static ReadOnlySpan<byte> Prefix => "8=FIX.4.4\u00019="u8;
    /// <summary>A body longer than this is refused as garbled rather than awaited.</summary>
    public const int MaxBodyLength = 8192;

    public static Frame Next(ReadOnlySpan<byte> buf)
    {
        Frame f = default;
        ReadOnlySpan<byte> prefix = Prefix;
        int have = Math.Min(buf.Length, prefix.Length);
        if (!buf.Slice(0, have).SequenceEqual(prefix.Slice(0, have))) return Skip(buf, 1);
        if (buf.Length <= prefix.Length) return Wait();
        int i = prefix.Length, length = 0;
        for (; i < buf.Length && buf[i] != Scan.Soh; i++)
        {
            uint d = (uint)(buf[i] - '0');
            if (d > 9 || i - prefix.Length >= 5) return Skip(buf, 1);
            length = length * 10 + (int)d;
        }
        if (i == buf.Length) return Wait();
        if (i == prefix.Length || length > MaxBodyLength) return Skip(buf, 1);
        int bodyStart = i + 1;
        int total = bodyStart + length + 7;  // "10=nnn\x01"
        if (buf.Length < total) return Wait();
        int trailer = bodyStart + length;
        if (buf[trailer] != '1' || buf[trailer + 1] != '0' || buf[trailer + 2] != '=' || buf[total - 1] != Scan.Soh ||
            (length > 0 && buf[trailer - 1] != Scan.Soh))
            return Skip(buf, 1);  // BodyLength lies: resynchronise on the next BeginString
        int sum = 0;
        for (int k = trailer + 3; k < total - 1; k++)
        {
            uint d = (uint)(buf[k] - '0');
            if (d > 9) return Skip(buf, total);
            sum = sum * 10 + (int)d;
        }
        f.Length = total;
        if (sum != Scan.Checksum(buf.Slice(0, trailer)))
        {
            f.Status = FrameStatus.Garbled;  // FIX: a bad CheckSum is ignored, its MsgSeqNum unused
            return f;
        }
        f.Status = FrameStatus.Complete;
        f.BodyStart = bodyStart;
        f.BodyLength = length;
        return f;
    }

    private static Frame Wait() => new Frame { Status = FrameStatus.Incomplete };

    private static Frame Skip(ReadOnlySpan<byte> buf, int from)
    {
        int next = Scan.FindBeginString(buf, from);
        // Keep a tail that may be the start of the next BeginString.
        int skip = next >= 0 ? next : Math.Max(from, buf.Length - 4);
        return new Frame { Status = FrameStatus.Garbled, Length = skip };
    }
}
