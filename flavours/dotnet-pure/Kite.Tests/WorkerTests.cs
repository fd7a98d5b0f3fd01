using System;
using System.Diagnostics;
using System.Text;
using Kite.Transport;
using Xunit;

namespace Kite.Tests;

/// <summary>A worker over real loopback sockets, driven pass by pass from the test thread.</summary>
public class WorkerTests
{
    private static string Exchange(Worker w, int fd, ReadOnlySpan<byte> send, int replies)
    {
        Sockets.SendAll(fd, send);
        var rx = new byte[64 * 1024];
        var text = new StringBuilder();
        int seen = 0;
        long deadline = Stopwatch.GetTimestamp() + 5 * Stopwatch.Frequency;
        while (seen < replies && Stopwatch.GetTimestamp() < deadline)
        {
            w.DoWork();
            int n = Sockets.TryRecv(fd, rx);
            if (n < 0) break;
            string s = Encoding.ASCII.GetString(rx, 0, n);
            text.Append(s);
            for (int i = s.IndexOf("\u000110=", StringComparison.Ordinal); i >= 0; i = s.IndexOf("\u000110=", i + 1, StringComparison.Ordinal)) seen++;
        }
        Assert.Equal(replies, seen);
        return text.ToString();
    }

    [Theory]
    [InlineData(ReadMode.Direct)]
    [InlineData(ReadMode.Epoll)]
    public void ListeningWorkerAcceptsLogsOnAndAcknowledgesOrders(ReadMode mode)
    {
        int listener = Sockets.Listen("127.0.0.1", 0, false, out int port);
        using var w = new Worker("test", 0, mode, 2, IdleKind.Spin, 0, 0);
        w.AddListener(listener);
        int fd = Sockets.ConnectLoopback(port);
        try
        {
            var m = new ClientMessages("BENCH0");
            var buf = new byte[4096];
            Assert.Contains("\u000135=A\u0001", Exchange(w, fd, buf.AsSpan(0, m.Logon(buf)), 1));
            int n = m.Order(buf, 1);
            n += m.Order(buf.AsSpan(n), 2);
            string acks = Exchange(w, fd, buf.AsSpan(0, n), 2);
            Assert.Contains("11=C000000000001\u0001", acks);
            Assert.Contains("11=C000000000002\u0001", acks);
            Assert.Equal(1, w.OpenCount);
            Assert.Contains("\u000135=5\u0001", Exchange(w, fd, buf.AsSpan(0, m.Simple(buf, "5"u8)), 1));
            Assert.Equal(0, w.OpenCount);
        }
        finally
        {
            Sockets.Close(fd);
            Sockets.Close(listener);
        }
    }

    [Fact]
    public void PoolWorkerServesSocketsHandedThroughItsQueue()
    {
        int listener = Sockets.Listen("127.0.0.1", 0, false, out int port);
        using var w = new Worker("test", 0, ReadMode.Epoll, 2, IdleKind.Spin, 0, 0);
        var queue = new SpscQueue(2);
        w.UseInbox(queue, -1);
        int fd = Sockets.ConnectLoopback(port);
        try
        {
            Assert.True(Sockets.WaitReadable(listener, 5000));
            int accepted = Sockets.Accept(listener, 0);
            Assert.True(accepted >= 0);
            Assert.True(queue.TryEnqueue(accepted));
            var m = new ClientMessages("BENCH3");
            var buf = new byte[4096];
            Assert.Contains("\u000156=BENCH3\u0001", Exchange(w, fd, buf.AsSpan(0, m.Logon(buf)), 1));
            Assert.Equal(1, w.OpenCount);
        }
        finally
        {
            Sockets.Close(fd);
            Sockets.Close(listener);
        }
    }
}
