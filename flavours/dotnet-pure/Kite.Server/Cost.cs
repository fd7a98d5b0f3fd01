using System;
using System.Diagnostics;
using System.Globalization;
using Kite.App;
using Kite.Codec;
using Kite.Transport;

namespace Kite.Server;

/// <summary>
/// `--cost N`: the engine's CPU cost per order without sockets: N orders
/// through a connection slot (framing, walk, session, ExecutionReport
/// written), repeated after a warm-up; prints ns per order and the bytes the
/// thread allocated.
/// </summary>
public static class Cost
{
    private const int Block = 64;

    public static int Run(int orders)
    {
        var app = new OrderAck();
        using var conn = new Connection(0, app, new UtcClock());
        var ix = new FieldIndex();
        var client = new ClientMessages("BENCH0");
        var logon = new byte[FixWriter.MaxMessage];
        int logonLength = client.Logon(logon);
        var block = new byte[Block * FixWriter.MaxMessage];
        var ends = new int[Block];
        int n = 0;
        for (int i = 0; i < Block; i++)
        {
            n += client.Order(block.AsSpan(n), (ulong)i, (ulong)i + 2);
            ends[i] = n;
        }
        var sink = new byte[Connection.TxCapacity];
        long Pass(int count)
        {
            long done = 0;
            while (done < count)
            {
                conn.Feed(logon.AsSpan(0, logonLength), ix);
                conn.TakeTx(sink);
                int from = 0;
                foreach (int end in ends)
                {
                    conn.Feed(block.AsSpan(from, end - from), ix);
                    conn.TakeTx(sink);
                    from = end;
                }
                done += Block;
            }
            return done;
        }
        Pass(Math.Min(orders, 100000));
        long allocated0 = GC.GetAllocatedBytesForCurrentThread();
        long t0 = Stopwatch.GetTimestamp();
        long done = Pass(orders);
        double seconds = Stopwatch.GetElapsedTime(t0).TotalSeconds;
        long allocated = GC.GetAllocatedBytesForCurrentThread() - allocated0;
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"cost: {done} orders, {seconds * 1e9 / done:F1} ns/order (a Logon per {Block}), allocated {allocated} bytes"));
        return 0;
    }
}
