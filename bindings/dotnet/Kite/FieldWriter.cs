using System;
using System.Buffers.Text;

namespace Kite;

/// <summary>
/// Writes a message body, "tag=value\x01" fields, into a buffer the caller
/// hands it (a stackalloc span on the hot path). A field that does not fit
/// is not written and sets <see cref="Overflowed"/>; nothing is allocated.
/// </summary>
public ref struct FieldWriter
{
    private readonly Span<byte> _buffer;
    private int _length;
    private bool _overflowed;

    /// <summary>A writer over buffer, empty.</summary>
    public FieldWriter(Span<byte> buffer)
    {
        _buffer = buffer;
        _length = 0;
        _overflowed = false;
    }

    /// <summary>The fields written so far.</summary>
    public readonly ReadOnlySpan<byte> Written => _buffer[.._length];

    /// <summary>A field did not fit (it and every later one were dropped).</summary>
    public readonly bool Overflowed => _overflowed;

    /// <summary>Bytes written.</summary>
    public readonly int Length => _length;

    /// <summary>A field with a value of raw bytes (must not contain SOH).</summary>
    public void Add(int tag, scoped ReadOnlySpan<byte> value)
    {
        Span<byte> d = Begin(tag, value.Length);
        if (d.IsEmpty) return;
        value.CopyTo(d);
        End(value.Length);
    }

    /// <summary>A one-character field (Side, OrdStatus...).</summary>
    public void Add(int tag, char value)
    {
        Span<byte> d = Begin(tag, 1);
        if (d.IsEmpty) return;
        d[0] = (byte)value;
        End(1);
    }

    /// <summary>An integer field.</summary>
    public void Add(int tag, long value)
    {
        Span<byte> d = Begin(tag, 20);
        if (d.IsEmpty) return;
        Utf8Formatter.TryFormat(value, d, out int n);
        End(n);
    }

    /// <summary>An unsigned integer field.</summary>
    public void Add(int tag, ulong value)
    {
        Span<byte> d = Begin(tag, 20);
        if (d.IsEmpty) return;
        Utf8Formatter.TryFormat(value, d, out int n);
        End(n);
    }

    /// <summary>A decimal field, <see cref="FixDecimal"/>'s text (101.25, 0, -3.5).</summary>
    public void Add(int tag, FixDecimal value)
    {
        Span<byte> d = Begin(tag, FixDecimal.MaxLength);
        if (d.IsEmpty) return;
        End(value.Format(d));
    }

    /// <summary>A UTCTimestamp field with milliseconds (YYYYMMDD-HH:MM:SS.sss) from UTC nanoseconds since the epoch.</summary>
    public void AddUtcTimestampMillis(int tag, long utcNs)
    {
        Span<byte> d = Begin(tag, FixTime.MillisLength);
        if (d.IsEmpty) return;
        End(FixTime.FormatMillis(utcNs, d));
    }

    // Writes "tag=" and returns room for at most maxValue bytes and the SOH,
    // or an empty span (and overflow) when they may not fit.
    private Span<byte> Begin(int tag, int maxValue)
    {
        if (_overflowed) return default;
        Span<byte> rest = _buffer[_length..];
        if (tag <= 0 || !Utf8Formatter.TryFormat(tag, rest, out int n) || rest.Length < n + 2 + maxValue)
        {
            _overflowed = true;
            return default;
        }
        rest[n] = (byte)'=';
        _length += n + 1;
        return _buffer.Slice(_length, maxValue + 1);
    }

    private void End(int valueLength)
    {
        _length += valueLength;
        _buffer[_length++] = 1;
    }
}
