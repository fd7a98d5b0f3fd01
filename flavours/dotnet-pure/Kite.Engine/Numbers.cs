using System;

namespace Kite.Codec;

/// <summary>A fixed-point decimal: Mantissa x 10^Exponent (101.25 is 10125, -2).</summary>
public readonly record struct Decimal64(long Mantissa, int Exponent);

/// <summary>Integer and fixed-point reads and writes over ASCII digits.</summary>
public static class Numbers
{
    /// <summary>Parses an unsigned decimal integer that is the whole span; false on anything else.</summary>
    public static bool TryParseUInt(ReadOnlySpan<byte> s, out ulong value)
    {
        value = 0;
        if (s.IsEmpty || s.Length > 19) return false;
        ulong v = 0;
        foreach (byte b in s)
        {
            uint d = (uint)(b - '0');
            if (d > 9) return false;
            v = v * 10 + d;
        }
        value = v;
        return true;
    }

    /// <summary>Parses "-12.340" style decimals (at most 18 significant digits) without floating point.</summary>
    public static bool TryParseDecimal(ReadOnlySpan<byte> s, out Decimal64 value)
    {
        value = default;
        int i = 0;
        bool negative = false;
        if (!s.IsEmpty && s[0] == '-') { negative = true; i = 1; }
        long m = 0;
        int exponent = 0, digits = 0;
        bool point = false;
        for (; i < s.Length; i++)
        {
            byte b = s[i];
            if (b == '.')
            {
                if (point) return false;
                point = true;
                continue;
            }
            uint d = (uint)(b - '0');
            if (d > 9 || ++digits > 18) return false;
            m = m * 10 + d;
            if (point) exponent--;
        }
        if (digits == 0) return false;
        value = new Decimal64(negative ? -m : m, exponent);
        return true;
    }

    /// <summary>Number of ASCII digits of v.</summary>
    public static int DigitCount(ulong v)
    {
        int n = 1;
        while (v >= 10) { v /= 10; n++; }
        return n;
    }

    /// <summary>Writes v's digits at the start of dest; returns how many.</summary>
    public static int WriteUInt(Span<byte> dest, ulong v)
    {
        int n = DigitCount(v);
        for (int i = n - 1; i >= 0; i--)
        {
            dest[i] = (byte)('0' + v % 10);
            v /= 10;
        }
        return n;
    }

    /// <summary>Writes v zero-padded to width digits.</summary>
    public static void WritePadded(Span<byte> dest, ulong v, int width)
    {
        for (int i = width - 1; i >= 0; i--)
        {
            dest[i] = (byte)('0' + v % 10);
            v /= 10;
        }
    }

    /// <summary>Writes a decimal as FIX text ("101.25", "-0.5", "100"); returns the length.</summary>
    public static int WriteDecimal(Span<byte> dest, Decimal64 d)
    {
        int pos = 0;
        ulong m = d.Mantissa < 0 ? (ulong)(-d.Mantissa) : (ulong)d.Mantissa;
        if (d.Mantissa < 0) dest[pos++] = (byte)'-';
        if (d.Exponent >= 0)
        {
            pos += WriteUInt(dest.Slice(pos), m);
            for (int i = 0; i < d.Exponent; i++) dest[pos++] = (byte)'0';
            return pos;
        }
        int scale = -d.Exponent;
        int digits = Math.Max(DigitCount(m), scale + 1);
        int point = digits - scale;
        Span<byte> all = dest.Slice(pos, digits + 1);
        ulong v = m;
        for (int i = digits; i >= 0; i--)
        {
            if (i == point) { all[i] = (byte)'.'; continue; }
            all[i] = (byte)('0' + v % 10);
            v /= 10;
        }
        return pos + digits + 1;
    }
}
