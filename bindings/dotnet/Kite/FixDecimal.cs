using System;
using System.Buffers.Text;

namespace Kite;

/// <summary>
/// A FIX decimal as fixed point, value = Mantissa * 10^-Scale (Price 101.25 is
/// 10125 with scale 2): never a binary double. Parsed from and formatted to
/// the wire's text without allocation.
/// </summary>
public readonly struct FixDecimal : IEquatable<FixDecimal>
{
    /// <summary>Longest text <see cref="Format"/> writes.</summary>
    public const int MaxLength = 22;
    private const int MaxScale = 18;

    /// <summary>The digits as an integer.</summary>
    public readonly long Mantissa;
    /// <summary>Digits after the point (0..18).</summary>
    public readonly int Scale;

    /// <summary>Mantissa * 10^-scale.</summary>
    /// <exception cref="ArgumentOutOfRangeException">scale is outside 0..18.</exception>
    public FixDecimal(long mantissa, int scale)
    {
        if ((uint)scale > MaxScale) throw new ArgumentOutOfRangeException(nameof(scale));
        Mantissa = mantissa;
        Scale = scale;
    }

    /// <summary>
    /// Parses "[-]digits[.digits]" (FIX's float: no exponent, no sign '+').
    /// </summary>
    /// <returns>false on anything else, or more than 18 significant digits.</returns>
    public static bool TryParse(ReadOnlySpan<byte> s, out FixDecimal value)
    {
        value = default;
        int i = 0;
        bool negative = s.Length > 0 && s[0] == (byte)'-';
        if (negative) i = 1;
        long m = 0;
        int digits = 0, scale = 0;
        bool point = false, any = false;
        for (; i < s.Length; ++i)
        {
            byte c = s[i];
            if (c == (byte)'.')
            {
                if (point) return false;
                point = true;
                continue;
            }
            uint d = (uint)(c - '0');
            if (d > 9) return false;
            any = true;
            if (m != 0 || d != 0) ++digits;
            if (digits > MaxScale) return false;
            m = m * 10 + d;
            if (point) ++scale;
        }
        if (!any || scale > MaxScale) return false;
        value = new FixDecimal(negative ? -m : m, scale);
        return true;
    }

    /// <summary>Writes the text ("101.25"; trailing zeros kept as parsed) and returns its length; 0 when dest is too small.</summary>
    public int Format(Span<byte> dest)
    {
        Span<byte> digits = stackalloc byte[20];
        ulong u = Mantissa < 0 ? (ulong)(-(Mantissa + 1)) + 1 : (ulong)Mantissa;
        Utf8Formatter.TryFormat(u, digits, out int n);
        int intDigits = Math.Max(n - Scale, 1);
        int length = (Mantissa < 0 ? 1 : 0) + intDigits + (Scale > 0 ? 1 + Scale : 0);
        if (dest.Length < length) return 0;
        int o = 0;
        if (Mantissa < 0) dest[o++] = (byte)'-';
        if (n <= Scale)
        {
            // Below 1: 0.05 is digits "5" with scale 2.
            dest[o++] = (byte)'0';
            dest[o++] = (byte)'.';
            for (int k = n; k < Scale; ++k) dest[o++] = (byte)'0';
            digits[..n].CopyTo(dest[o..]);
            return o + n;
        }
        digits[..(n - Scale)].CopyTo(dest[o..]);
        o += n - Scale;
        if (Scale == 0) return o;
        dest[o++] = (byte)'.';
        digits[(n - Scale)..n].CopyTo(dest[o..]);
        o += Scale;
        return o;
    }

    /// <inheritdoc/>
    public bool Equals(FixDecimal other) => Mantissa == other.Mantissa && Scale == other.Scale;
    /// <inheritdoc/>
    public override bool Equals(object? obj) => obj is FixDecimal d && Equals(d);
    /// <inheritdoc/>
    public override int GetHashCode() => HashCode.Combine(Mantissa, Scale);
    /// <summary>Same mantissa and scale.</summary>
    public static bool operator ==(FixDecimal a, FixDecimal b) => a.Equals(b);
    /// <summary>Different mantissa or scale.</summary>
    public static bool operator !=(FixDecimal a, FixDecimal b) => !a.Equals(b);

    /// <summary>The text (allocates: not for the hot path).</summary>
    public override string ToString()
    {
        Span<byte> b = stackalloc byte[MaxLength];
        return System.Text.Encoding.ASCII.GetString(b[..Format(b)]);
    }
}
