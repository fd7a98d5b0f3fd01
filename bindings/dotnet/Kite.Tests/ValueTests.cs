using System;
using System.Text;
using Kite;
using Xunit;

namespace Kite.Tests;

public class FixDecimalTests
{
    [Theory]
    [InlineData("101.25", 10125, 2)]
    [InlineData("100", 100, 0)]
    [InlineData("0.05", 5, 2)]
    [InlineData("-3.5", -35, 1)]
    [InlineData("0", 0, 0)]
    [InlineData("1.000", 1000, 3)]
    public void parsesFixFloats(string text, long mantissa, int scale)
    {
        Assert.True(FixDecimal.TryParse(Encoding.ASCII.GetBytes(text), out FixDecimal d));
        Assert.Equal(new FixDecimal(mantissa, scale), d);
    }

    [Theory]
    [InlineData("")]
    [InlineData("-")]
    [InlineData("1.2.3")]
    [InlineData("1e5")]
    [InlineData("+1")]
    [InlineData("12a")]
    [InlineData("1234567890123456789")]
    public void refusesWhatIsNotAFixFloat(string text) =>
        Assert.False(FixDecimal.TryParse(Encoding.ASCII.GetBytes(text), out _));

    [Theory]
    [InlineData("101.25")]
    [InlineData("100")]
    [InlineData("0.05")]
    [InlineData("-3.5")]
    [InlineData("-0.001")]
    [InlineData("0")]
    [InlineData("999999999999999999")]
    public void formatsWhatItParsed(string text)
    {
        Assert.True(FixDecimal.TryParse(Encoding.ASCII.GetBytes(text), out FixDecimal d));
        Assert.Equal(text, d.ToString());
    }

    [Fact]
    public void formatsTheMostNegativeMantissa() =>
        Assert.Equal("-9.223372036854775808", new FixDecimal(long.MinValue, 18).ToString());

    [Fact]
    public void formatReturnsZeroWhenTheBufferIsTooSmall() =>
        Assert.Equal(0, new FixDecimal(10125, 2).Format(new byte[5]));
}

public class FieldWriterTests
{
    private static string Text(ReadOnlySpan<byte> b) => Encoding.ASCII.GetString(b).Replace('\u0001', '|');

    [Fact]
    public void writesTagValueSohFields()
    {
        var w = new FieldWriter(new byte[128]);
        w.Add(Tag.ClOrdID, "C1"u8);
        w.Add(Tag.Side, '1');
        w.Add(Tag.OrderQty, 100L);
        w.Add(Tag.OrderID, 1234567890123456UL);
        w.Add(Tag.Price, new FixDecimal(10125, 2));
        Assert.False(w.Overflowed);
        Assert.Equal("11=C1|54=1|38=100|37=1234567890123456|44=101.25|", Text(w.Written));
    }

    [Fact]
    public void dropsAFieldThatDoesNotFitAndEveryOneAfter()
    {
        var w = new FieldWriter(new byte[12]);
        w.Add(Tag.ClOrdID, "C1"u8);
        w.Add(Tag.Symbol, "KITE.XPAR"u8);
        w.Add(Tag.Side, '1');
        Assert.True(w.Overflowed);
        Assert.Equal("11=C1|", Text(w.Written));
    }

    [Fact]
    public void refusesTagZero()
    {
        var w = new FieldWriter(new byte[32]);
        w.Add(0, "x"u8);
        Assert.True(w.Overflowed);
        Assert.Equal(0, w.Length);
    }

    [Theory]
    [InlineData("2026-12-01T17:20:17.123Z")]
    [InlineData("1970-01-01T00:00:00.000Z")]
    [InlineData("2000-02-29T23:59:59.999Z")]
    [InlineData("2100-03-01T12:00:00.500Z")]
    public void writesUtcTimestampsWithMilliseconds(string iso)
    {
        DateTime t = DateTime.Parse(iso, null, System.Globalization.DateTimeStyles.AdjustToUniversal);
        long ns = (t - DateTime.UnixEpoch).Ticks * 100 + 999_999; // sub-millisecond part is cut, not rounded
        var w = new FieldWriter(new byte[64]);
        w.AddUtcTimestampMillis(Tag.TransactTime, ns);
        Assert.Equal("60=" + t.ToString("yyyyMMdd-HH:mm:ss.fff", System.Globalization.CultureInfo.InvariantCulture) + "|",
                     Text(w.Written));
    }
}
