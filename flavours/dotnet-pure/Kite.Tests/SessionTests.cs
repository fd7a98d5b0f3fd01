using System;
using System.Threading;
using Kite.Codec;
using Kite.Session;
using Kite.Transport;
using Xunit;

namespace Kite.Tests;

public class SessionTests
{
    [Fact]
    public void LogonIsAnsweredWithResetAndHeartBtInt()
    {
        using var rig = new Rig();
        var r = rig.Send(b => rig.Client.Logon(b));
        Assert.Equal("A", r[0].Type);
        Assert.Equal("Y", r[0].Get(Tag.ResetSeqNumFlag));
        Assert.Equal("30", r[0].Get(Tag.HeartBtInt));
        Assert.Equal("1", r[0].Get(Tag.MsgSeqNum));
        Assert.Equal("KITE", r[0].Get(Tag.SenderCompID));
        Assert.Equal("BENCH0", r[0].Get(Tag.TargetCompID));
    }

    [Fact]
    public void OrdersAreAcknowledgedInOrderWithinTheContractsSizeBand()
    {
        using var rig = new Rig();
        rig.Logon();
        for (ulong id = 1; id <= 3; id++)
        {
            var r = rig.Send(b => rig.Client.Order(b, id));
            Assert.Single(r);
            Assert.Equal("8", r[0].Type);
            Assert.Equal($"C{id:D12}", r[0].Get(Tag.ClOrdID));
            Assert.Equal("0", r[0].Get(Tag.ExecType));
            Assert.Equal("0", r[0].Get(Tag.OrdStatus));
            Assert.Equal("KITE.XPAR", r[0].Get(Tag.Symbol));
            Assert.Equal("101.25", r[0].Get(Tag.Price));
            Assert.Equal(16, r[0].Get(Tag.OrderID).Length);
            Assert.Equal((id + 1).ToString(), r[0].Get(Tag.MsgSeqNum));
            Assert.InRange(r[0].Length, 190, 260);
        }
    }

    [Fact]
    public void TestRequestIsAnsweredWithItsId()
    {
        using var rig = new Rig();
        rig.Logon();
        var r = rig.Send(b => rig.Client.TestRequest(b, "T-1"u8));
        Assert.Equal("0", r[0].Type);
        Assert.Equal("T-1", r[0].Get(Tag.TestReqID));
    }

    [Fact]
    public void HeartbeatGetsNoAnswer()
    {
        using var rig = new Rig();
        rig.Logon();
        Assert.Empty(rig.Send(b => rig.Client.Simple(b, "0"u8)));
        Assert.Equal(SessionState.Active, rig.Conn.Session.State);
    }

    [Fact]
    public void TooHighAsksForAResendFromTheExpectedNumberOnce()
    {
        using var rig = new Rig();
        rig.Logon();
        var r = rig.Send(b => rig.Client.Order(b, 1, 5));
        Assert.Equal("2", r[0].Type);
        Assert.Equal("2", r[0].Get(Tag.BeginSeqNo));
        Assert.Empty(rig.Send(b => rig.Client.Order(b, 2, 6)));  // the same gap: asked already
        Assert.Equal(2UL, rig.Conn.Session.NextIn);
    }

    [Fact]
    public void TooLowWithoutPossDupLogsOutAndCloses()
    {
        using var rig = new Rig();
        rig.Logon();
        var r = rig.Send(b => rig.Client.Order(b, 1, 1));
        Assert.Equal("5", r[0].Type);
        Assert.True(rig.Conn.Closing);
    }

    [Fact]
    public void ResendRequestIsAnsweredWithAGapFill()
    {
        using var rig = new Rig();
        rig.Logon();
        rig.Send(b => rig.Client.Order(b, 1));
        rig.Send(b => rig.Client.Order(b, 2));  // we sent 1 (Logon), 2, 3
        var r = rig.Send(b => rig.Client.ResendRequest(b, 2));
        Assert.Equal("4", r[0].Type);
        Assert.Equal("2", r[0].Get(Tag.MsgSeqNum));
        Assert.Equal("Y", r[0].Get(Tag.GapFillFlag));
        Assert.Equal("Y", r[0].Get(Tag.PossDupFlag));
        Assert.Equal("4", r[0].Get(Tag.NewSeqNo));
        // The gap fill does not use a number: the next message is 4.
        Assert.Equal("4", rig.Send(b => rig.Client.Order(b, 3))[0].Get(Tag.MsgSeqNum));
    }

    [Fact]
    public void UnknownTypeIsABusinessRejectWithReason3()
    {
        using var rig = new Rig();
        rig.Logon();
        ulong seq = rig.Client.NextSeq;
        var r = rig.Send(b => rig.Client.Simple(b, "U1"u8));
        Assert.Equal("j", r[0].Type);
        Assert.Equal(seq.ToString(), r[0].Get(Tag.RefSeqNum));
        Assert.Equal("U1", r[0].Get(Tag.RefMsgType));
        Assert.Equal("3", r[0].Get(Tag.BusinessRejectReason));
    }

    [Fact]
    public void GarbledFrameIsIgnoredAndItsNumberReused()
    {
        using var rig = new Rig();
        rig.Logon();
        var buf = new byte[1024];
        int n = rig.Client.Order(buf, 9, 2);
        buf[n - 2] = (byte)(buf[n - 2] == '9' ? '0' : buf[n - 2] + 1);
        Assert.Empty(rig.SendBytes(buf.AsSpan(0, n)));
        var r = rig.Send(b => rig.Client.Order(b, 10, 2));
        Assert.Equal("8", r[0].Type);
    }

    [Fact]
    public void LogoutIsAnsweredThenTheConnectionCloses()
    {
        using var rig = new Rig();
        rig.Logon();
        var r = rig.Send(b => rig.Client.Simple(b, "5"u8));
        Assert.Equal("5", r[0].Type);
        Assert.True(rig.Conn.Closing);
    }

    [Fact]
    public void FirstMessageOtherThanLogonIsRefused()
    {
        using var rig = new Rig();
        var r = rig.Send(b => rig.Client.Order(b, 1, 1));
        Assert.Equal("5", r[0].Type);
        Assert.Equal("BENCH0", r[0].Get(Tag.TargetCompID));
        Assert.True(rig.Conn.Closing);
    }

    [Fact]
    public void FullSendBufferHoldsFramesBackUntilThereIsRoom()
    {
        using var rig = new Rig();
        rig.Logon();
        var buf = new byte[Connection.RxCapacity];
        int n = 0, sent = 0;
        while (n + 300 < buf.Length) { n += rig.Client.Order(buf.AsSpan(n), (ulong)sent); sent++; }
        rig.Conn.Feed(buf.AsSpan(0, n), rig.Index);
        Assert.True(rig.Conn.RxBacklog);  // 64 KiB of orders answer with more than 64 KiB
        int answered = rig.Drain().Count;
        Assert.True(answered < sent);
        while (rig.Conn.RxBacklog)
        {
            rig.Conn.Process(rig.Index);
            answered += rig.Drain().Count;
        }
        Assert.Equal(sent, answered);
    }

    [Fact]
    public void OrdersSplitAcrossReadsAreAnsweredOnceComplete()
    {
        using var rig = new Rig();
        rig.Logon();
        var buf = new byte[4096];
        int n = rig.Client.Order(buf, 1);
        n += rig.Client.Order(buf.AsSpan(n), 2);
        Assert.Empty(rig.SendBytes(buf.AsSpan(0, 50)));
        var r = rig.SendBytes(buf.AsSpan(50, n - 60));
        Assert.Single(r);
        Assert.Single(rig.SendBytes(buf.AsSpan(n - 10, 10)));
    }
}

public class AllocationTests
{
    [Fact]
    public void SteadyStateAllocatesNothingOver100000Orders()
    {
        using var rig = new Rig();
        var client = rig.Client;
        // A Logon (MsgSeqNum 1, ResetSeqNumFlag) then 64 orders (2..65), replayed as a block.
        var logon = new byte[1024];
        int logonLength = client.Logon(logon);
        var orders = new byte[64][];
        for (int i = 0; i < orders.Length; i++)
        {
            var b = new byte[1024];
            int n = client.Order(b, (ulong)i, (ulong)i + 2);
            orders[i] = b.AsSpan(0, n).ToArray();
        }
        var sink = new byte[64 * 1024];
        void Round()
        {
            rig.Conn.Feed(logon.AsSpan(0, logonLength), rig.Index);
            rig.Conn.TakeTx(sink);
            foreach (byte[] order in orders)
            {
                rig.Conn.Feed(order, rig.Index);
                rig.Conn.TakeTx(sink);
            }
        }
        Round();  // first calls: JIT, static data
        ulong acked = rig.App.Orders;
        long before = GC.GetAllocatedBytesForCurrentThread();
        for (int round = 0; round < 100000 / orders.Length + 1; round++) Round();
        long grew = GC.GetAllocatedBytesForCurrentThread() - before;
        Assert.True(rig.App.Orders - acked >= 100000, $"{rig.App.Orders - acked} orders acknowledged");
        Assert.Equal(0, grew);
    }
}

public class QueueTests
{
    [Fact]
    public void QueueIsBoundedAndFifo()
    {
        var q = new SpscQueue(3);
        Assert.Equal(4, q.Capacity);
        for (int i = 0; i < 4; i++) Assert.True(q.TryEnqueue(i));
        Assert.False(q.TryEnqueue(9));
        for (int i = 0; i < 4; i++)
        {
            Assert.True(q.TryDequeue(out int v));
            Assert.Equal(i, v);
        }
        Assert.False(q.TryDequeue(out _));
    }

    [Fact]
    public void ProducerAndConsumerThreadsSeeEveryValueOnceInOrder()
    {
        var q = new SpscQueue(8);
        const int count = 50000;
        long sum = 0;
        int expected = 0;
        bool ordered = true;
        var consumer = new Thread(() =>
        {
            while (expected < count)
            {
                if (!q.TryDequeue(out int v)) { Thread.Yield(); continue; }
                ordered &= v == expected;
                sum += v;
                expected++;
            }
        });
        consumer.Start();
        for (int i = 0; i < count; i++)
            while (!q.TryEnqueue(i)) Thread.Yield();
        consumer.Join();
        Assert.True(ordered);
        Assert.Equal((long)count * (count - 1) / 2, sum);
    }
}
