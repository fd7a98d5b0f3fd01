package kite.pure;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The session driven frame by frame, its answers read from the outbox. */
class SessionTest {
    private static final String TIME = "52=20261201-10:00:00.000|";
    private final SessionRegistry registry = new SessionRegistry("BENCH", 2);
    private final OrderApp app = new OrderApp(1_000_000_000_000_000L);
    private final Outbox out = new Outbox(64 * 1024);
    private final Session s = new Session(registry, app, out);
    private final FieldIndex ix = new FieldIndex();
    private final Header h = new Header();
    private long now = 1_764_583_200_000L;

    /** A message from BENCH0 numbered seq; returns what the session sent back. */
    private List<String> in(String type, long seq, String fields) {
        return inFrom("BENCH0", type, seq, fields);
    }

    private List<String> inFrom(String comp, String type, long seq, String fields) {
        final String f = Fix.frame("35=" + type + "|49=" + comp + "|56=KITE|34=" + seq + "|" + TIME + fields);
        final ByteBuffer b = Fix.buffer(f);
        assertTrue(ix.build(b, 0, f.length()) && h.read(ix));
        s.onFrame(h, ix, now);
        return sent();
    }

    private List<String> sent() {
        final List<String> msgs = new ArrayList<>();
        final Framer framer = new Framer();
        int at = out.head();
        while (at < out.tail()) {
            assertEquals(Framer.Status.COMPLETE, framer.frame(out.buffer(), at, out.tail()));
            msgs.add(Fix.text(out.buffer(), at, framer.size()));
            at += framer.size();
        }
        out.clear();
        return msgs;
    }

    private static String only(List<String> msgs) {
        assertEquals(1, msgs.size(), msgs.toString());
        return msgs.get(0);
    }

    private void logOn() {
        s.open(now);
        only(in("A", 1, "98=0|108=30|141=Y|"));
    }

    @Test
    void logonIsAnsweredWithResetAndNumbersStartAtOne() {
        s.open(now);
        final String a = only(in("A", 1, "98=0|108=30|141=Y|"));
        assertTrue(a.contains("|35=A|49=KITE|56=BENCH0|34=1|"), a);
        assertTrue(a.contains("|98=0|108=30|141=Y|"), a);
        assertEquals(Session.State.ACTIVE, s.state());
        assertEquals(2, s.expectedIn());
        assertEquals(2, s.nextOut());
    }

    @Test
    void anOrderIsAcknowledgedWithAnExecutionReportOfTheContractsSize() {
        logOn();
        final String er = only(in("D", 2, "11=C000000000001|21=1|1=BENCH-ACCOUNT-001|55=KITE.XPAR|54=1|"
                                          + "60=20261201-10:00:00.000000|38=100|40=2|44=101.25|59=0|"));
        assertTrue(er.contains("|35=8|49=KITE|56=BENCH0|34=2|"), er);
        assertTrue(er.contains("|37=1000000000000000|11=C000000000001|17=1000000000000000|150=0|39=0|55=KITE.XPAR|"
                               + "54=1|38=100|44=101.25|151=100|14=0|6=0|60="), er);
        assertTrue(er.length() >= 190 && er.length() <= 260, er.length() + " bytes");
        assertEquals(1, app.orders());
    }

    @Test
    void anOrderWithoutClOrdIDIsRejected() {
        logOn();
        final String r = only(in("D", 2, "55=KITE.XPAR|54=1|38=100|40=2|44=101.25|"));
        assertTrue(r.contains("|35=3|") && r.contains("|45=2|371=11|372=D|373=1|"), r);
        assertEquals(0, app.orders());
    }

    @Test
    void aHeartbeatGetsNoAnswerAndATestRequestAHeartbeatWithItsId() {
        logOn();
        assertTrue(in("0", 2, "").isEmpty());
        final String hb = only(in("1", 3, "112=KITE-CHECK-1|"));
        assertTrue(hb.contains("|35=0|") && hb.contains("|112=KITE-CHECK-1|"), hb);
        assertEquals(4, s.expectedIn());
    }

    @Test
    void aGapIsAnsweredWithOneResendRequestFromTheExpectedNumber() {
        logOn();
        final String rr = only(in("D", 4, "11=C1|55=X|54=1|38=1|44=1|"));
        assertTrue(rr.contains("|35=2|") && rr.contains("|7=2|16=0|"), rr);
        assertTrue(in("0", 5, "").isEmpty(), "the same gap is not asked for twice");
        assertEquals(2, s.expectedIn());
        assertEquals(0, app.orders(), "a message beyond the gap is not processed");
        in("4", 2, "123=Y|36=6|");  // the gap is filled
        assertEquals(6, s.expectedIn());
        assertTrue(only(in("0", 8, "")).contains("|7=6|"), "a new gap is asked for again");
    }

    @Test
    void aNumberTooLowWithoutPossDupLogsOutAndCloses() {
        logOn();
        in("0", 2, "");
        final String lo = only(in("D", 1, "11=C1|"));
        assertTrue(lo.contains("|35=5|") && lo.contains("|58=MsgSeqNum too low, expecting 3 but received 1|"), lo);
        assertTrue(s.closeWanted());
    }

    @Test
    void aNumberTooLowWithPossDupIsIgnored() {
        logOn();
        in("0", 2, "");
        assertTrue(in("0", 1, "43=Y|122=20261201-09:59:59.000|").isEmpty());
        assertFalse(s.closeWanted());
    }

    @Test
    void aResendRequestIsAnsweredWithAGapFillToOurNextNumber() {
        logOn();
        in("1", 2, "112=a|");
        in("1", 3, "112=b|");  // we have sent 1..3
        final String gf = only(in("2", 4, "7=2|16=0|"));
        assertTrue(gf.contains("|35=4|") && gf.contains("|34=2|") && gf.contains("|43=Y|122=") && gf.contains("|123=Y|36=4|"), gf);
        assertEquals(4, s.nextOut(), "a gap fill takes no number of its own");
    }

    @Test
    void aSequenceResetGapFillMovesTheExpectedNumber() {
        logOn();
        assertTrue(in("4", 2, "123=Y|36=10|").isEmpty());
        assertEquals(10, s.expectedIn());
        final String r = only(in("4", 10, "123=Y|36=5|"));
        assertTrue(r.contains("|35=3|") && r.contains("|373=5|"), r);
    }

    @Test
    void anUnknownMessageTypeGetsABusinessMessageReject() {
        logOn();
        final String j = only(in("U1", 2, "58=check|"));
        assertTrue(j.contains("|35=j|") && j.contains("|45=2|372=U1|380=3|"), j);
    }

    @Test
    void aLogoutIsAnsweredWithALogoutThenTheConnectionCloses() {
        logOn();
        final String lo = only(in("5", 2, ""));
        assertTrue(lo.contains("|35=5|"), lo);
        assertTrue(s.closeWanted());
    }

    @Test
    void aSecondLogonOfASessionThatIsLoggedOnIsRefused() {
        logOn();
        final Session other = new Session(registry, app, new Outbox(4096));
        other.open(now);
        final String f = Fix.frame("35=A|49=BENCH0|56=KITE|34=1|" + TIME + "98=0|108=30|141=Y|");
        final ByteBuffer b = Fix.buffer(f);
        ix.build(b, 0, f.length());
        h.read(ix);
        other.onFrame(h, ix, now);
        assertTrue(other.closeWanted());
        s.closed();
        final Session third = new Session(registry, app, new Outbox(4096));
        third.open(now);
        third.onFrame(h, ix, now);
        assertEquals(Session.State.ACTIVE, third.state(), "released when the first connection closed");
    }

    @Test
    void anUnknownCompIdOrAFirstMessageOtherThanLogonIsLoggedOut() {
        s.open(now);
        final String lo = only(inFrom("BENCH7", "A", 1, "98=0|108=30|"));
        assertTrue(lo.contains("|35=5|") && lo.contains("|56=BENCH7|") && lo.contains("|58=Unknown session"), lo);
        assertTrue(s.closeWanted());
        s.open(now);
        assertTrue(only(in("D", 1, "")).contains("|58=First message is not a Logon|"));
    }

    @Test
    void timersSendHeartbeatsThenATestRequestThenGiveUp() {
        logOn();
        now += 30_000;
        s.onTimer(now);
        assertTrue(only(sent()).contains("|35=0|"));
        now += 6_000;
        s.onTimer(now);
        final String tr = only(sent());
        assertTrue(tr.contains("|35=1|") && tr.contains("|112=KITE-TEST|"), tr);
        now += 30_000;
        s.onTimer(now);
        assertTrue(s.closeWanted());
    }

    @Test
    void shutdownSendsALogoutAndWaitsForItsAnswer() {
        logOn();
        s.shutdown(now);
        assertTrue(only(sent()).contains("|35=5|"));
        assertFalse(s.closeWanted());
        assertTrue(in("5", 2, "").isEmpty(), "the answer to our Logout is not answered");
        assertTrue(s.closeWanted());
    }
}
