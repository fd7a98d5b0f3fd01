package kite.pure;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

class FramerTest {
    private final Framer framer = new Framer();
    private final String logon = Fix.frame("35=A|49=BENCH0|56=KITE|34=1|52=20261201-10:00:00.000|98=0|108=30|141=Y|");

    @Test
    void aCompleteFrameReportsItsSizeAndBody() {
        final ByteBuffer b = Fix.buffer(logon + "8=FIX");
        assertEquals(Framer.Status.COMPLETE, framer.frame(b, 0, b.capacity()));
        assertEquals(logon.length(), framer.size());
        assertEquals("35=A", Fix.text(b, framer.bodyStart(), 4));
    }

    @Test
    void everyPrefixOfAFrameIsIncomplete() {
        final ByteBuffer b = Fix.buffer(logon);
        for (int n = 0; n < logon.length(); n++)
            assertEquals(Framer.Status.INCOMPLETE, framer.frame(b, 0, n), "prefix of " + n + " bytes");
    }

    @Test
    void aWrongCheckSumIsReportedWithTheFramesSizeSoItCanBeSkipped() {
        final String bad = logon.substring(0, logon.length() - 2) + (logon.charAt(logon.length() - 2) == '9' ? '0' : '9') + "\u0001";
        final ByteBuffer b = Fix.buffer(bad);
        assertEquals(Framer.Status.BAD_CHECKSUM, framer.frame(b, 0, b.capacity()));
        assertEquals(bad.length(), framer.size());
    }

    @Test
    void framesThatCannotBeResynchronisedAreInvalid() {
        for (String s : new String[] {"9=12\u000135=A\u0001", "8=FIX.4.4\u00019=x\u0001", "8=FIX.4.4\u000135=A\u0001",
                                      "8=FIX.4.4\u00019=99999999\u0001", "8=FIX.4.4\u00019=5\u000135=0\u000111=123\u0001"}) {
            final ByteBuffer b = Fix.buffer(s);
            assertEquals(Framer.Status.INVALID, framer.frame(b, 0, b.capacity()), s);
        }
    }

    @Test
    void theIndexWalksEveryFieldAndReadsValuesInPlace() {
        final String order = Fix.frame("35=D|49=BENCH0|56=KITE|34=7|52=20261201-10:00:00.000|11=C000000000001|"
                                       + "1=BENCH-ACCOUNT-001|55=KITE.XPAR|54=1|38=100|40=2|44=101.25|59=0|5001=x|");
        final ByteBuffer b = Fix.buffer(order);
        final FieldIndex ix = new FieldIndex();
        assertTrue(ix.build(b, 0, order.length()));
        assertEquals(17, ix.count());
        assertEquals(Tag.BeginString, ix.tagAt(0));
        assertEquals(Tag.CheckSum, ix.tagAt(ix.count() - 1));
        assertEquals(7, ix.getLong(Tag.MsgSeqNum, -1));
        assertEquals(100, ix.getLong(Tag.OrderQty, -1));
        assertEquals('1', ix.getChar(Tag.Side));
        assertTrue(ix.equals(Tag.Symbol, Ascii.bytes("KITE.XPAR")));
        assertEquals("x", Ascii.string(b, ix.offset(5001), ix.length(5001)));
        assertFalse(ix.has(Tag.Text));
        final Decimal d = new Decimal();
        assertTrue(ix.getDecimal(Tag.Price, d));
        assertEquals(10125, d.mantissa);
        assertEquals(-2, d.exponent);
        final Header h = new Header();
        assertTrue(h.read(ix));
        assertTrue(h.is('D'));
        assertEquals(7, h.seqNum);
        assertTrue(h.senderIs(Ascii.bytes("BENCH0"), 6));
    }

    @Test
    void theIndexForgetsThePreviousFrame() {
        final FieldIndex ix = new FieldIndex();
        final String a = Fix.frame("35=0|112=X|");
        final String b = Fix.frame("35=0|");
        ix.build(Fix.buffer(a), 0, a.length());
        assertTrue(ix.has(Tag.TestReqID));
        ix.build(Fix.buffer(b), 0, b.length());
        assertFalse(ix.has(Tag.TestReqID));
    }

    @Test
    void malformedFieldsAndDecimalsAreRefused() {
        final FieldIndex ix = new FieldIndex();
        assertFalse(ix.build(Fix.buffer("8=FIX.4.4\u0001x1=2\u0001"), 0, 15));
        assertFalse(ix.build(Fix.buffer("8=FIX.4.4\u000135=A"), 0, 14));  // no closing SOH
        final Decimal d = new Decimal();
        for (String s : new String[] {"", "-", "1.2.3", "1e5", "1234567890123456789"})
            assertFalse(d.parse(Fix.buffer(s), 0, s.length()), s);
        assertTrue(d.parse(Fix.buffer("-0.5"), 0, 4));
        assertEquals(-5, d.mantissa);
        assertEquals(-1, d.exponent);
    }
}
