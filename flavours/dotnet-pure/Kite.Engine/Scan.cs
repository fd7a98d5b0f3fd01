using System;
using System.Numerics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Runtime.Intrinsics;
using System.Runtime.Intrinsics.X86;

namespace Kite.Codec;

/// <summary>
/// Byte scans of the hot path. Each vector routine has a scalar twin with the
/// same contract; the tests feed both the same random input.
/// </summary>
public static class Scan
{
    public const byte Soh = 0x01;

    /// <summary>
    /// Writes the offset of every SOH in <paramref name="data"/>, in order, into
    /// <paramref name="positions"/>; returns how many were found, or -1 when
    /// more than positions.Length exist.
    /// </summary>
    public static int SohPositions(ReadOnlySpan<byte> data, Span<ushort> positions)
    {
        if (Vector256.IsHardwareAccelerated) return SohPositions256(data, positions);
        if (Vector128.IsHardwareAccelerated) return SohPositions128(data, positions);
        return SohPositionsScalar(data, positions);
    }

    public static int SohPositionsScalar(ReadOnlySpan<byte> data, Span<ushort> positions)
    {
        int n = 0;
        for (int i = 0; i < data.Length; i++)
        {
            if (data[i] != Soh) continue;
            if (n == positions.Length) return -1;
            positions[n++] = (ushort)i;
        }
        return n;
    }

    internal static int SohPositions256(ReadOnlySpan<byte> data, Span<ushort> positions)
    {
        ref byte start = ref MemoryMarshal.GetReference(data);
        Vector256<byte> soh = Vector256.Create(Soh);
        int n = 0, i = 0;
        for (; i + Vector256<byte>.Count <= data.Length; i += Vector256<byte>.Count)
        {
            uint mask = Vector256.Equals(Vector256.LoadUnsafe(ref start, (nuint)i), soh).ExtractMostSignificantBits();
            while (mask != 0)
            {
                if (n == positions.Length) return -1;
                positions[n++] = (ushort)(i + BitOperations.TrailingZeroCount(mask));
                mask &= mask - 1;
            }
        }
        return Tail(data, i, positions, n);
    }

    internal static int SohPositions128(ReadOnlySpan<byte> data, Span<ushort> positions)
    {
        ref byte start = ref MemoryMarshal.GetReference(data);
        Vector128<byte> soh = Vector128.Create(Soh);
        int n = 0, i = 0;
        for (; i + Vector128<byte>.Count <= data.Length; i += Vector128<byte>.Count)
        {
            uint mask = Vector128.Equals(Vector128.LoadUnsafe(ref start, (nuint)i), soh).ExtractMostSignificantBits();
            while (mask != 0)
            {
                if (n == positions.Length) return -1;
                positions[n++] = (ushort)(i + BitOperations.TrailingZeroCount(mask));
                mask &= mask - 1;
            }
        }
        return Tail(data, i, positions, n);
    }

    private static int Tail(ReadOnlySpan<byte> data, int i, Span<ushort> positions, int n)
    {
        for (; i < data.Length; i++)
        {
            if (data[i] != Soh) continue;
            if (n == positions.Length) return -1;
            positions[n++] = (ushort)i;
        }
        return n;
    }

    /// <summary>The sum of the bytes modulo 256: FIX's CheckSum.</summary>
    public static byte Checksum(ReadOnlySpan<byte> data)
    {
        if (Sse2.IsSupported) return ChecksumSse2(data);
        return ChecksumScalar(data);
    }

    public static byte ChecksumScalar(ReadOnlySpan<byte> data)
    {
        uint sum = 0;
        foreach (byte b in data) sum += b;
        return (byte)sum;
    }

    internal static byte ChecksumSse2(ReadOnlySpan<byte> data)
    {
        ref byte start = ref MemoryMarshal.GetReference(data);
        // psadbw against zero: two 64-bit lanes, each the sum of 8 bytes.
        Vector128<ulong> acc = Vector128<ulong>.Zero;
        int i = 0;
        for (; i + 16 <= data.Length; i += 16)
        {
            Vector128<byte> v = Vector128.LoadUnsafe(ref start, (nuint)i);
            acc = Sse2.Add(acc, Sse2.SumAbsoluteDifferences(v, Vector128<byte>.Zero).AsUInt64());
        }
        ulong sum = acc.GetElement(0) + acc.GetElement(1);
        for (; i < data.Length; i++) sum += Unsafe.Add(ref start, i);
        return (byte)sum;
    }

    /// <summary>Index of the first occurrence of "8=FIX" at or after from, or -1.</summary>
    public static int FindBeginString(ReadOnlySpan<byte> data, int from)
    {
        ReadOnlySpan<byte> begin = "8=FIX"u8;
        if (from >= data.Length) return -1;
        int at = data.Slice(from).IndexOf(begin);
        return at < 0 ? -1 : from + at;
    }
}
