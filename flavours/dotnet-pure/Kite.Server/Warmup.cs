using System;
using System.Diagnostics;
using Kite.Transport;

namespace Kite.Server;

/// <summary>
/// Runs every hot path before the ready file (the JIT compiles each method
/// once, at full optimisation, on its first call): a loopback client drives
/// a direct-read worker and an epoll worker through Logon, orders one at a
/// time and in bursts, the session's messages and a Logout.
/// </summary>
public static class Warmup
{
    public const int Orders = 20000;
    private const int Burst = 8;

    public static void Run()
    {
        foreach (ReadMode mode in new[] { ReadMode.Direct, ReadMode.Epoll }) Drive(mode);
    }

    private static void Drive(ReadMode mode)
    {
        int listener = Sockets.Listen("127.0.0.1", 0, false, out int port);
        using var w = new Worker("warmup", 0, mode, 2, IdleKind.Spin, 0, 0);
        w.AddListener(listener);
        int fd = Sockets.ConnectLoopback(port);
        var m = new ClientMessages("WARMUP");
        var buf = new byte[FixWriterRoom * Burst];
        var rx = new byte[64 * 1024];
        try
        {
            Exchange(w, fd, buf.AsSpan(0, m.Logon(buf)), rx, 1);
            for (ulong id = 0; id < Orders; id += Burst)
            {
                int n = 0;
                for (int k = 0; k < Burst; k++) n += m.Order(buf.AsSpan(n), id + (ulong)k);
                Exchange(w, fd, buf.AsSpan(0, n), rx, Burst);
            }
            Exchange(w, fd, buf.AsSpan(0, m.TestRequest(buf, "WARM"u8)), rx, 1);
            Exchange(w, fd, buf.AsSpan(0, m.Simple(buf, "U1"u8)), rx, 1);
            Exchange(w, fd, buf.AsSpan(0, m.ResendRequest(buf, 1)), rx, 1);
            Exchange(w, fd, buf.AsSpan(0, m.Simple(buf, "0"u8)), rx, 0);
            Exchange(w, fd, buf.AsSpan(0, m.Order(buf, 1, m.NextSeq + 1)), rx, 1);  // a gap: ResendRequest
            Exchange(w, fd, buf.AsSpan(0, m.Simple(buf, "5"u8, m.NextSeq + 2)), rx, 1);
        }
        finally
        {
            Sockets.Close(fd);
            Sockets.Close(listener);
        }
    }

    private const int FixWriterRoom = Kite.Codec.FixWriter.MaxMessage;

    /// <summary>Sends, then runs the worker until count replies (SOH-terminated CheckSums) came back.</summary>
    private static void Exchange(Worker w, int fd, ReadOnlySpan<byte> send, byte[] rx, int count)
    {
        Sockets.SendAll(fd, send);
        int seen = 0;
        long deadline = Stopwatch.GetTimestamp() + Stopwatch.Frequency;  // a second at most per exchange
        while (seen < count && Stopwatch.GetTimestamp() < deadline)
        {
            w.DoWork();
            int n = Sockets.TryRecv(fd, rx);
            if (n < 0) break;
            for (int i = 0; i + 3 < n; i++)
                if (rx[i] == 1 && rx[i + 1] == (byte)'1' && rx[i + 2] == (byte)'0' && rx[i + 3] == (byte)'=') seen++;
        }
        if (count == 0) w.DoWork();
        if (seen < count) throw new InvalidOperationException($"warm-up: {seen} of {count} replies from the engine");
    }
}
