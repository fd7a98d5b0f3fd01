using System;
using System.Text;
using Kite.Codec;
using Xunit;

namespace Kite.Tests;

public class ScanTests
{
    [Fact]
    public void VectorAndScalarSohScansAgreeOnRandomInput()
    {
        var rng = new Random(12345);
        var data = new byte[700];
        var scalar = new ushort[700];
        var vector = new ushort[700];
        for (int round = 0; round < 2000; round++)
        {
            int len = rng.Next(0, data.Length);
            for (int i = 0; i < len; i++) data[i] = (byte)(rng.Next(4) == 0 ? 1 : rng.Next(256));
            var span = data.AsSpan(0, len);
            int expected = Scan.SohPositionsScalar(span, scalar);
            Assert.Equal(expected, Scan.SohPositions256(span, vector));
            Assert.True(scalar.AsSpan(0, expected).SequenceEqual(vector.AsSpan(0, expected)));
            Assert.Equal(expected, Scan.SohPositions128(span, vector));
            Assert.True(scalar.AsSpan(0, expected).SequenceEqual(vector.AsSpan(0, expected)));
            Assert.Equal(Scan.ChecksumScalar(span), Scan.ChecksumSse2(span));
        }
    }

    [Fact]
    public void SohScanReportsOverflowInsteadOfWritingPastTheIndex()
    {
        var data = new byte[100];
        Array.Fill(data, (byte)1);
        Assert.Equal(-1, Scan.SohPositions(data, new ushort[10]));
        Assert.Equal(-1, Scan.SohPositionsScalar(data, new ushort[10]));
    }
}

public class FramingTests
{
    private static byte[] Order()
    {
        var buf = new byte[1024];
        int n = new Kite.Transport.ClientMessages("BENCH0").Order(buf, 7);
        return buf.AsSpan(0, n).ToArray();
    }

    [Fact]
    public void CompleteFrameIsFoundWithItsBody()
    {
        byte[] m = Order();
        Frame f = Framing.Next(m);
        Assert.Equal(FrameStatus.Complete, f.Status);
        Assert.Equal(m.Length, f.Length);
        Assert.Equal("35=D", Encoding.ASCII.GetString(m, f.BodyStart, 4));
    }

    [Fact]
    public void EveryPrefixOfAFrameIsIncomplete()
    {
        byte[] m = Order();
        for (int n = 0; n < m.Length; n++)
            Assert.Equal(FrameStatus.Incomplete, Framing.Next(m.AsSpan(0, n)).Status);
    }

    [Fact]
    public void BadCheckSumIsGarbledAndSkippedWhole()
    {
        byte[] m = Order();
        m[m.Length - 2] = (byte)(m[m.Length - 2] == '9' ? '0' : m[m.Length - 2] + 1);
        Frame f = Framing.Next(m);
        Assert.Equal(FrameStatus.Garbled, f.Status);
        Assert.Equal(m.Length, f.Length);
    }

    [Fact]
    public void WrongBodyLengthResynchronisesOnTheNextBeginString()
    {
        byte[] m = Order();
        byte[] bad = Encoding.ASCII.GetBytes("8=FIX.4.4\u00019=5\u000135=0\u0001");
        byte[] both = new byte[bad.Length + m.Length];
        bad.CopyTo(both, 0);
        m.CopyTo(both, bad.Length);
        Frame f = Framing.Next(both);
        Assert.Equal(FrameStatus.Garbled, f.Status);
        Assert.Equal(bad.Length, f.Length);
        Assert.Equal(FrameStatus.Complete, Framing.Next(both.AsSpan(f.Length)).Status);
    }

    [Fact]
    public void IndexReadsHeaderAndFixedPointFields()
    {
        byte[] m = Order();
        Frame f = Framing.Next(m);
        var body = m.AsSpan(f.BodyStart, f.BodyLength);
        var ix = new FieldIndex();
        Assert.True(ix.Build(body));
        Assert.True(Header.Read(ix, body, out Header h));
        Assert.Equal(1UL, h.MsgSeqNum);
        Assert.True(h.SenderCompID.SequenceEqual("BENCH0"u8));
        Assert.True(ix.TryGet(body, Tag.Price, out var p));
        Assert.True(Numbers.TryParseDecimal(p, out Decimal64 price));
        Assert.Equal(new Decimal64(10125, -2), price);
        Assert.True(ix.TryGetUInt(body, Tag.OrderQty, out ulong qty));
        Assert.Equal(100UL, qty);
    }

    [Fact]
    public void IndexRefusesAFieldWithoutEquals()
    {
        var ix = new FieldIndex();
        Assert.False(ix.Build("35=D\u0001garbage\u0001"u8));
        Assert.False(ix.Build("35=D\u000155="u8));  // no closing SOH
    }

    [Theory]
    [InlineData("101.25", 10125, -2)]
    [InlineData("-0.5", -5, -1)]
    [InlineData("100", 100, 0)]
    [InlineData("0.001", 1, -3)]
    public void DecimalsRoundTrip(string text, long mantissa, int exponent)
    {
        Assert.True(Numbers.TryParseDecimal(Encoding.ASCII.GetBytes(text), out Decimal64 d));
        Assert.Equal(new Decimal64(mantissa, exponent), d);
        var buf = new byte[32];
        int n = Numbers.WriteDecimal(buf, d);
        Assert.Equal(text, Encoding.ASCII.GetString(buf, 0, n));
    }

    [Theory]
    [InlineData("")]
    [InlineData("1.2.3")]
    [InlineData("12a")]
    [InlineData("-")]
    public void BadDecimalsAreRefused(string text) => Assert.False(Numbers.TryParseDecimal(Encoding.ASCII.GetBytes(text), out _));
}
