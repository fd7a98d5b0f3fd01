using System;
using System.Diagnostics;
using System.Threading;
using Kite;

namespace Kite.DotnetNative;

// Before the ready file: a Kite initiator, in this process, logs on as
// BENCH0 and sends orders (and one message of an unknown type), so that every
// callback and the application's paths are compiled (tiered compilation is
// off: once, fully optimised) and every engine thread that served them has
// run managed code. Its thread exits before the ready file. A failure (a
// transport the kernel initiator cannot reach) is reported and not fatal:
// the first orders then pay the compilation.
internal static class Warmup
{
    private const int Orders = 2000;
    private const int Batch = 100;
    private static readonly TimeSpan Budget = TimeSpan.FromSeconds(2);

    private sealed class Counter : Application
    {
        public int Reports;
        public int Rejects;
        public volatile bool LoggedOn;

        public override void OnLogon(Session session) => LoggedOn = true;

        public override void OnMessage(Session session, in Message message)
        {
            ReadOnlySpan<byte> t = message.MsgType;
            if (t.Length == 1 && t[0] == (byte)'8') Interlocked.Increment(ref Reports);
            else if (t.Length == 1 && t[0] == (byte)'j') Interlocked.Increment(ref Rejects);
        }
    }

    public static void Run(Options o, int port, AckApplication server)
    {
        var clock = Stopwatch.StartNew();
        string host = o.Bind == "0.0.0.0" ? "127.0.0.1" : o.Bind;
        string toml =
            "[engine]\ntransport = \"kernel\"\nidle = \"block\"\n\n" +
            "[defaults]\nBeginString = \"FIX.4.4\"\nSenderCompID = \"BENCH0\"\nResetOnLogon = true\n" +
            "UseDataDictionary = false\nCheckLatency = false\nStoreKind = \"null\"\n\n" +
            "[[session]]\nTargetCompID = " + ServerConfig.Quoted(ServerConfig.ServerCompId) + "\n" +
            "ConnectionType = \"initiator\"\nSocketConnectHost = " + ServerConfig.Quoted(host) + "\n" +
            $"SocketConnectPort = {port}\nHeartBtInt = 30\n";
        var counter = new Counter();
        string outcome;
        try
        {
            using Initiator initiator = Initiator.Start(toml, counter, "warm-up initiator");
            outcome = Drive(initiator.Session(0), counter, clock);
            initiator.Shutdown(500);
        }
        catch (KiteException e)
        {
            outcome = "failed: " + e.Message;
        }
        Console.Error.WriteLine($"kite-dotnet-native: warm-up {outcome} in {clock.ElapsedMilliseconds} ms");
    }

    private static string Drive(Session session, Counter counter, Stopwatch clock)
    {
        while (!counter.LoggedOn)
        {
            if (clock.Elapsed > Budget) return "failed: no Logon answer";
            Thread.Sleep(1);
        }
        Span<byte> body = stackalloc byte[256];
        int sent = 0;
        while (sent < Orders && clock.Elapsed < Budget)
        {
            for (int k = 0; k < Batch && sent < Orders; ++k)
            {
                var w = new FieldWriter(body);
                w.Add(Tag.ClOrdID, "W"u8);
                w.Add(21, '1');
                w.Add(1, "WARMUP"u8);
                w.Add(Tag.Symbol, "KITE.XPAR"u8);
                w.Add(Tag.Side, '1');
                w.AddUtcTimestampMillis(Tag.TransactTime, DateTime.UtcNow.Ticks * 100 - DateTime.UnixEpoch.Ticks * 100);
                w.Add(Tag.OrderQty, 100L);
                w.Add(Tag.OrdType, '2');
                w.Add(Tag.Price, new FixDecimal(10125, 2));
                w.Add(Tag.TimeInForce, '0');
                Status s = session.Send("D"u8, w.Written);
                if (s == Status.BackPressured) break;
                if (s != Status.Ok) return $"failed: an order was not sent ({s})";
                ++sent;
            }
            while (Volatile.Read(ref counter.Reports) < sent && clock.Elapsed < Budget) Thread.Sleep(0);
        }
        session.Send("U1"u8, "58=warm-up\u0001"u8);
        while (Volatile.Read(ref counter.Rejects) == 0 && clock.Elapsed < Budget) Thread.Sleep(1);
        return $"{Volatile.Read(ref counter.Reports)} of {sent} orders answered";
    }
}
